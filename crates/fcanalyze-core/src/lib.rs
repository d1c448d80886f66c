//! fcanalyze's core: Microsoft FreeCell deals, the exact rules of play, canonical positions and the
//! search engine. Plain Rust with no Python types; `fcanalyze-py` binds it as `fcanalyze._core`.

pub mod beam;
pub mod card;
pub mod cascade;
pub mod classify;
pub mod deal;
pub mod error;
pub mod heuristic;
pub mod interrupt;
pub mod key;
pub mod layer;
pub mod layered;
pub mod layout;
pub mod limits;
mod line;
mod mem;
pub mod notation;
pub mod outcome;
pub mod position;
pub mod prover;
mod queue;
pub mod replay;
pub mod short;
pub mod solver;
pub mod store;

// compat: removed at integration
pub mod prove {
    pub(crate) use crate::key::FIELD_LOW;
    pub use crate::key::{cards_dealt, cards_home, pack, signature, unpack};
    pub use crate::line::{checked_line, line_of};
    pub use crate::prover::*;
}

// compat: removed at integration
pub mod search {
    pub(crate) use crate::heuristic::scored_children;
    pub use crate::heuristic::{features, peek_features, score, weigh, Weights, NFEATURES};
    pub use crate::limits::Limits;
    pub use crate::solver::*;
}

pub use error::{Error, Result};
pub use limits::Limits;
pub use outcome::{Outcome, SearchResult, SolutionMove};
pub use position::{Layout, Move, Position};
pub use solver::{Solver, Strategy};
