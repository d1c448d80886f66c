//! An independent replay of a solution under SPEC §2 (or macroxue's automatic moves, as the layout
//! says), written apart from `position` (plain vectors, no
//! links, no keys) so that it shares nothing with the search's move generator. Every solution the core
//! returns is checked by it; the Python checker (`fcanalyze.checker`) is a second, slower twin.

use crate::autoplay::Autoplay;
use crate::card::{self, Card, NONE};
use crate::layout::Layout;
use crate::outcome::SolutionMove;
use crate::position::FOUNDATION;

/// Why a replay failed: the index of the offending move (or the move count, for the end) and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayError {
    pub index: usize,
    pub reason: String,
}

struct Game {
    cols: Vec<Vec<Card>>,
    cells: Vec<Card>,
    found: [u8; 4],
    autoplay: Autoplay,
}

fn place_name(p: u8) -> String {
    match p {
        0..=7 => format!("column {}", p + 1),
        8..=15 => format!("free cell {}", (b'a' + p - 8) as char),
        FOUNDATION => "the foundations".into(),
        _ => format!("place {p}"),
    }
}

impl Game {
    fn red(c: Card) -> bool {
        matches!(c % 4, 1 | 2)
    }

    /// Whether `c` goes home automatically: it fits its foundation and, under the safe rules, both
    /// opposite-colour foundations are high enough (SPEC §2).
    fn auto_home(&self, c: Card) -> bool {
        let (r, s) = ((c / 4) as i32, (c % 4) as usize);
        let f = |x: usize| self.found[x] as i32;
        if f(s) != r {
            return false;
        }
        if self.autoplay == Autoplay::Max {
            return true;
        }
        let opp: [usize; 2] = if Self::red(c) { [0, 3] } else { [1, 2] };
        let same = 3 - s; // clubs <-> spades, diamonds <-> hearts
        let rank = r + 1; // A = 1
        rank <= 2
            || (f(opp[0]) >= rank - 1 && f(opp[1]) >= rank - 1)
            || (f(opp[0]) >= rank - 2 && f(opp[1]) >= rank - 2 && f(same) >= rank - 3)
    }

    fn any_auto(&self) -> bool {
        self.cells.iter().any(|&c| c != NONE && self.auto_home(c))
            || self
                .cols
                .iter()
                .any(|col| col.last().is_some_and(|&c| self.auto_home(c)))
    }

    fn play(&mut self, m: &SolutionMove) -> Result<(), String> {
        let SolutionMove { mv, auto } = *m;
        let n = mv.count as usize;
        if n == 0 {
            return Err("a move of zero cards".into());
        }
        let moving: Vec<Card> = match mv.from {
            0..=7 => {
                let col = &self.cols[mv.from as usize];
                if col.len() < n {
                    return Err(format!(
                        "{} holds {} cards, fewer than {n}",
                        place_name(mv.from),
                        col.len()
                    ));
                }
                let run = col[col.len() - n..].to_vec();
                for w in run.windows(2) {
                    if !(w[0] / 4 == w[1] / 4 + 1 && Self::red(w[0]) != Self::red(w[1])) {
                        return Err(format!(
                            "the {n} cards from {} are not a run",
                            place_name(mv.from)
                        ));
                    }
                }
                run
            }
            8..=15 => {
                let slot = (mv.from - 8) as usize;
                if slot >= self.cells.len() || self.cells[slot] == NONE {
                    return Err(format!("{} is empty", place_name(mv.from)));
                }
                if n != 1 {
                    return Err("only one card can leave a free cell".into());
                }
                vec![self.cells[slot]]
            }
            _ => return Err(format!("cannot move from {}", place_name(mv.from))),
        };
        let first = moving[0];
        if auto && (mv.to != FOUNDATION || !self.auto_home(first)) {
            return Err(format!(
                "{} is marked automatic but is not an automatic move under {} autoplay",
                card::name(first),
                self.autoplay
            ));
        }
        match mv.to {
            FOUNDATION => {
                if n != 1 {
                    return Err("only one card at a time goes to the foundations".into());
                }
                if self.found[(first % 4) as usize] != first / 4 {
                    return Err(format!(
                        "{} cannot go to its foundation yet",
                        card::name(first)
                    ));
                }
                self.found[(first % 4) as usize] += 1;
            }
            8..=15 => {
                let slot = (mv.to - 8) as usize;
                if slot >= self.cells.len() {
                    return Err(format!("{} does not exist", place_name(mv.to)));
                }
                if self.cells[slot] != NONE {
                    return Err(format!("{} is occupied", place_name(mv.to)));
                }
                if n != 1 {
                    return Err("only one card fits in a free cell".into());
                }
                self.cells[slot] = first;
            }
            0..=7 => {
                if mv.to == mv.from {
                    return Err("a move from a column to itself".into());
                }
                let free = self.cells.iter().filter(|&&c| c == NONE).count() as u64;
                let dest = &self.cols[mv.to as usize];
                let empty = self
                    .cols
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| c.is_empty() && *i != mv.to as usize)
                    .count() as u32;
                let limit = (free + 1) << empty;
                if n as u64 > limit {
                    return Err(format!("{n} cards cannot move at once with {free} free cells and {empty} empty columns (at most {limit})"));
                }
                if let Some(&t) = dest.last() {
                    if !(t / 4 == first / 4 + 1 && Self::red(t) != Self::red(first)) {
                        return Err(format!(
                            "{} does not fit on {}",
                            card::name(first),
                            card::name(t)
                        ));
                    }
                }
                self.cols[mv.to as usize].extend_from_slice(&moving);
            }
            _ => return Err(format!("cannot move to {}", place_name(mv.to))),
        }
        match mv.from {
            0..=7 => {
                let col = &mut self.cols[mv.from as usize];
                col.truncate(col.len() - n);
            }
            _ => self.cells[(mv.from - 8) as usize] = NONE,
        }
        Ok(())
    }
}

/// Replay `moves` from `layout` with `ncells` free cells: every move legal, automatic moves exactly those
/// the layout's rules make (marked `auto`, all applied before the next player move; under
/// [`Autoplay::Max`] no foundation move by hand), and the game won at the end.
pub fn replay(layout: &Layout, ncells: usize, moves: &[SolutionMove]) -> Result<(), ReplayError> {
    let err = |index, reason: String| Err(ReplayError { index, reason });
    if let Err(e) = layout.validate(ncells) {
        return err(0, e.to_string());
    }
    let mut g = Game {
        cols: layout.columns.clone(),
        cells: vec![NONE; ncells],
        found: layout.foundations,
        autoplay: layout.autoplay,
    };
    g.cols.resize(8, Vec::new());
    for (i, &c) in layout.cells.iter().filter(|&&c| c != NONE).enumerate() {
        g.cells[i] = c;
    }
    if layout.cells.len() <= ncells {
        g.cells[..layout.cells.len()].copy_from_slice(&layout.cells);
    }
    for (i, m) in moves.iter().enumerate() {
        if !m.auto && m.mv.to == FOUNDATION && layout.autoplay == Autoplay::Max {
            return err(
                i,
                "a foundation move by hand; under max autoplay cards go home only automatically"
                    .into(),
            );
        }
        if !m.auto && g.any_auto() {
            return err(i, "an automatic move was due before this move".into());
        }
        if let Err(reason) = g.play(m) {
            return err(i, reason);
        }
    }
    if g.any_auto() {
        return err(
            moves.len(),
            "an automatic move was due after the last move".into(),
        );
    }
    if g.found != [13; 4] {
        return err(
            moves.len(),
            format!(
                "the game is not won: {} cards are home",
                g.found.iter().map(|&f| f as u32).sum::<u32>()
            ),
        );
    }
    Ok(())
}
