//! The layout of a start position: the cards of each column, the free cells and the foundations, as
//! dealt ([`Layout::deal`]) or read from a board, and the check that it is a position of the full deck.

use crate::autoplay::Autoplay;
use crate::card::{self, Card, NONE};
use crate::error::{Error, Result};

/// Number of columns.
pub const NCOLS: usize = 8;
/// Largest number of free cells supported.
pub const MAX_CELLS: usize = 8;

/// The parts of a position as read from a board or a deal: columns from the buried card to the exposed
/// card, free-cell slots (`NONE` for an empty slot) and the number of cards home per suit (C, D, H, S),
/// with the rules of automatic moves the game is played under (every search and replay of the layout
/// follows them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub columns: Vec<Vec<Card>>,
    pub cells: Vec<Card>,
    pub foundations: [u8; 4],
    pub autoplay: Autoplay,
}

impl Layout {
    /// The layout of Microsoft deal `n`.
    pub fn deal(n: u64) -> Result<Layout> {
        Ok(Layout {
            columns: crate::deal::deal(n)?.to_vec(),
            cells: vec![],
            foundations: [0; 4],
            autoplay: Autoplay::Safe,
        })
    }

    /// This layout played under `autoplay`.
    pub fn with_autoplay(mut self, autoplay: Autoplay) -> Layout {
        self.autoplay = autoplay;
        self
    }

    /// Check that the layout is a position of the full deck playable with `ncells` free cells.
    pub fn validate(&self, ncells: usize) -> Result<()> {
        if ncells > MAX_CELLS {
            return Err(Error::BadCells(format!(
                "{ncells} free cells requested; fcanalyze supports 0 to {MAX_CELLS}"
            )));
        }
        if self.columns.len() > NCOLS {
            return Err(Error::BadBoard(format!(
                "the board has {} columns; FreeCell has {NCOLS}",
                self.columns.len()
            )));
        }
        let in_cells = self.cells.iter().filter(|&&c| c != NONE).count();
        if in_cells > ncells {
            return Err(Error::BadCells(format!(
                "the board has {in_cells} cards in free cells but only {ncells} free cells are in play"
            )));
        }
        let mut seen = [0u8; 52];
        for (s, &n) in self.foundations.iter().enumerate() {
            if n > 13 {
                return Err(Error::BadBoard(format!(
                    "foundation {} holds {n} cards; at most 13",
                    card::SUIT_CHARS[s] as char
                )));
            }
            for r in 0..n {
                seen[card::make(r, s as u8) as usize] += 1;
            }
        }
        for &c in self
            .columns
            .iter()
            .flatten()
            .chain(self.cells.iter().filter(|&&c| c != NONE))
        {
            if c as usize >= 52 {
                return Err(Error::BadBoard(format!("bad card code {c}")));
            }
            seen[c as usize] += 1;
        }
        let dups: Vec<String> = (0..52u8)
            .filter(|&c| seen[c as usize] > 1)
            .map(card::name)
            .collect();
        if !dups.is_empty() {
            return Err(Error::BadBoard(format!(
                "duplicate card{} {} (a card is on the foundations or in play twice)",
                if dups.len() > 1 { "s" } else { "" },
                dups.join(", ")
            )));
        }
        let missing: Vec<String> = (0..52u8)
            .filter(|&c| seen[c as usize] == 0)
            .map(card::name)
            .collect();
        if !missing.is_empty() {
            return Err(Error::BadBoard(format!(
                "missing card{} {} (a board must hold all 52 cards)",
                if missing.len() > 1 { "s" } else { "" },
                missing.join(", ")
            )));
        }
        Ok(())
    }
}
