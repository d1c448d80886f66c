//! The core's one error type. Expected results (unsolvable, undecided) are values, never errors.

use std::fmt;

/// Everything that can go wrong in the core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A deal number outside 1..=8,589,934,591.
    BadDeal(String),
    /// A board (position text or parts) that is not a legal FreeCell position.
    BadBoard(String),
    /// A number of free cells outside 0..=8, or a position holding more free-cell cards than cells.
    BadCells(String),
    /// A move that is not legal where it is played.
    BadMove(String),
    /// Any other invalid argument.
    BadArgument(String),
    /// A broken invariant inside the core: a bug, never the user's fault.
    Internal(String),
    /// The system failed a search's files (the layered proof's spill files: no temp dir, a bad disk).
    Io(String),
    /// The disk filled under a search's files. The layered proof ends undecided for want of disk
    /// instead ([`crate::outcome::Budget::Disk`]), its files kept for a resume.
    DiskFull(String),
}

impl Error {
    /// True when the error describes bad input rather than a bug.
    pub fn is_user_error(&self) -> bool {
        !matches!(self, Error::Internal(_) | Error::Io(_) | Error::DiskFull(_))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadDeal(m)
            | Error::BadBoard(m)
            | Error::BadCells(m)
            | Error::BadMove(m)
            | Error::BadArgument(m) => f.write_str(m),
            Error::Internal(m) => write!(f, "internal error: {m}"),
            Error::Io(m) | Error::DiskFull(m) => write!(f, "I/O error: {m}"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
