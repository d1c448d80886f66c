//! fcanalyze's core: Microsoft FreeCell deals, the exact rules of play, canonical positions and the
//! search engine. Plain Rust with no Python types; `fcanalyze-py` binds it as `fcanalyze._core`.

mod autoplay;
mod beam;
mod card;
mod cascade;
mod classify;
mod deal;
mod error;
mod heuristic;
mod interrupt;
mod key;
mod layer;
mod layered;
mod layout;
mod limits;
mod line;
mod mem;
mod merge;
mod notation;
mod outcome;
mod position;
mod prover;
mod queue;
mod replay;
mod short;
mod shorten;
mod solver;
mod store;

// Errors.
pub use error::{Error, Result};

// Deals and cards.
pub use card::{
    make as make_card, name as card_name, parse as parse_card, rank, suit, Card, NONE, SUIT_CHARS,
};
pub use deal::{deal, MAX_DEAL};

// Positions and moves.
pub use autoplay::Autoplay;
pub use key::Key;
pub use layout::{Layout, MAX_CELLS, NCOLS};
pub use position::{Move, Origin, Position, FOUNDATION};

// Searches and budgets.
pub use heuristic::{features, peek_features, Weights, NFEATURES};
pub use interrupt::{clear as clear_interrupt, count as interrupts, raise as interrupt};
pub use limits::Limits;
pub use outcome::{Budget, Outcome, SearchResult, SolutionMove};
pub use short::{solve_short, Config as ShortConfig, ShortSolver};
pub use shorten::{shorten, Shortener, Shortening};
pub use solver::{Dive, Solver, Strategy};
pub use store::BYTES_PER_POSITION;

// Proofs.
pub use cascade::{prove_bounded, WIDE_BEAM_POSITIONS};
pub use layered::{
    lend_threads, lent_threads, prove_layered, LayeredConfig, LayeredOutcome, LayeredResult, Share,
};
pub use prover::{Prover, Rules, Thread};

// Lines and notation.
pub use line::checked_line;
pub use notation::{format as format_line, format_move, parse as parse_line};
pub use replay::replay;

// Classification.
pub use classify::{
    classify, short_line as classify_short_line, Classification, Classifier, ClassifyLimits,
    BEAMS as CLASSIFY_BEAMS, LONG_LINE as CLASSIFY_LONG_LINE, SHORTEN as CLASSIFY_SHORTEN,
};

/// For the lab (`crates/fcanalyze-lab`) and the benches only: experiment entry points that are not
/// part of the product's API.
#[doc(hidden)]
pub mod lab {
    pub use crate::beam::{beam_weighted, layer_beam};
}
