//! The two rules of automatic moves a game may be played under (SPEC §2 and macroxue's): which cards
//! go to the foundations by themselves, uncounted. Everything else about the rules is the same.

use std::fmt;

use crate::error::{Error, Result};

/// Which cards go home automatically after the deal and after every move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Autoplay {
    /// SPEC §2: only the cards no other card could still need go home by themselves; players may also
    /// send any card that fits home by hand.
    #[default]
    Safe,
    /// macroxue's rules: every card that fits its foundation goes home at once, so no foundation move
    /// is ever made by hand.
    Max,
}

impl Autoplay {
    /// The rules named `name` (`"safe"` or `"max"`).
    pub fn parse(name: &str) -> Result<Autoplay> {
        match name {
            "safe" => Ok(Autoplay::Safe),
            "max" => Ok(Autoplay::Max),
            _ => Err(Error::BadArgument(format!(
                "unknown autoplay rules {name:?}; use \"safe\" or \"max\""
            ))),
        }
    }

    /// The rules' name, as [`Autoplay::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Autoplay::Safe => "safe",
            Autoplay::Max => "max",
        }
    }
}

impl fmt::Display for Autoplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
