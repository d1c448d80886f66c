//! The layers of the reachable set. Two counts never decrease along a line of play: the cards on the
//! foundations (they never leave), and the cards no longer lying on the card they were dealt on when that
//! card is not their parent (they can never go back there). Their sum, the *progress* of a position
//! ([`progress`]), numbers its layer: a move leads to the same layer or a later one. The layered proof
//! ([`crate::layered`]) finishes the layers in order, and the layer beam ([`crate::beam::layer_beam`])
//! keeps the best positions of each.

use crate::key::{cards_dealt, cards_home, Key};

/// Number of layers: progress runs from 0 to 104.
pub const LAYERS: usize = 105;

/// The layer of a position: cards home plus cards that left the (non-parent) card they were dealt on.
#[inline(always)]
pub fn progress(key: &Key) -> usize {
    (cards_home(key) + 52 - cards_dealt(key)) as usize
}
