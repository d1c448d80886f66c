//! Standard solution notation (Solitaire Laboratory, FreeCell Pro, Freecell Solver's `-sn`): two
//! characters per player move, `1`–`8` columns, `a`–`g` free cells (an eighth cell is `i`, since `h`
//! is the foundations), `h` foundations. Automatic moves are not written: under max autoplay
//! ([`crate::Autoplay::Max`]) that is every move to the foundations, so no `h` is ever written. A move
//! of several cards carries its count in parentheses, `36(3)`, so that moves into an empty column are
//! unambiguous.

use crate::error::{Error, Result};
use crate::outcome::SolutionMove;
use crate::position::{Move, FOUNDATION};

const CELL_CHARS: &[u8; 8] = b"abcdefgi";

fn place_char(p: u8) -> char {
    match p {
        0..=7 => (b'1' + p) as char,
        8..=15 => CELL_CHARS[(p - 8) as usize] as char,
        _ => 'h',
    }
}

fn parse_place(ch: u8, dest: bool) -> Option<u8> {
    match ch {
        b'1'..=b'8' => Some(ch - b'1'),
        b'h' if dest => Some(FOUNDATION),
        _ => CELL_CHARS
            .iter()
            .position(|&c| c == ch)
            .map(|i| 8 + i as u8),
    }
}

/// One move in standard notation.
pub fn format_move(m: &Move) -> String {
    let mut s = String::with_capacity(6);
    s.push(place_char(m.from));
    s.push(place_char(m.to));
    if m.count > 1 {
        s.push_str(&format!("({})", m.count));
    }
    s
}

/// The player moves of a solution in standard notation, separated by spaces.
pub fn format(moves: &[SolutionMove]) -> String {
    moves
        .iter()
        .filter(|m| !m.auto)
        .map(|m| format_move(&m.mv))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parse standard notation into player moves (automatic moves are implied).
pub fn parse(text: &str) -> Result<Vec<Move>> {
    text.split_whitespace()
        .map(|tok| {
            let bad = || {
                Error::BadMove(format!(
                    "bad move {tok:?} in standard notation (e.g. 3a, 36, a8, 2h, 36(3))"
                ))
            };
            let b = tok.as_bytes();
            if b.len() < 2 {
                return Err(bad());
            }
            let from = parse_place(b[0], false).ok_or_else(bad)?;
            let to = parse_place(b[1], true).ok_or_else(bad)?;
            let count = match &tok[2..] {
                "" => 1,
                rest => rest
                    .strip_prefix('(')
                    .and_then(|r| r.strip_suffix(')'))
                    .and_then(|n| n.parse::<u8>().ok())
                    .filter(|&n| n >= 1)
                    .ok_or_else(bad)?,
            };
            Ok(Move { from, to, count })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let moves = [
            Move {
                from: 2,
                to: 8,
                count: 1,
            },
            Move {
                from: 2,
                to: 5,
                count: 3,
            },
            Move {
                from: 8,
                to: 7,
                count: 1,
            },
            Move {
                from: 1,
                to: FOUNDATION,
                count: 1,
            },
            Move {
                from: 15,
                to: 0,
                count: 1,
            },
        ];
        let line: Vec<SolutionMove> = moves
            .iter()
            .map(|&mv| SolutionMove { mv, auto: false })
            .collect();
        let text = format(&line);
        assert_eq!(text, "3a 36(3) a8 2h i1");
        assert_eq!(parse(&text).unwrap(), moves);
        assert!(parse("3x").is_err());
        assert!(parse("36(0)").is_err());
        assert!(parse("h3").is_err());
    }
}
