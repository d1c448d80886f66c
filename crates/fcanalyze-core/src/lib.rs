//! fcanalyze's core: Microsoft FreeCell deals, the exact rules of play, canonical positions and the
//! search engine. Plain Rust with no Python types; `fcanalyze-py` binds it as `fcanalyze._core`.

pub mod beam;
pub mod card;
pub mod cascade;
pub mod classify;
pub mod deal;
pub mod error;
pub mod interrupt;
pub mod layer;
pub mod layered;
mod line;
mod mem;
pub mod notation;
pub mod outcome;
pub mod position;
pub mod prove;
pub mod replay;
pub mod search;
pub mod short;
pub mod store;

pub use error::{Error, Result};
pub use outcome::{Outcome, SearchResult, SolutionMove};
pub use position::{Layout, Move, Position};
pub use search::{Limits, Solver, Strategy};
