//! `fcanalyze-lab`: the experiment drivers of the fcanalyze core, one subcommand each. They measure,
//! tune and fingerprint the searches; they are not part of the product, and the workspace's default
//! members leave this crate out (plain `cargo build` / `cargo test` and `make test` never build it).
//!
//! Run one with `cargo run --release -p fcanalyze-lab -- SUBCOMMAND ARGS...`; the arguments and the
//! environment variables of each are described at the top of its module:
//!
//! - `range START END CELLS`: solve a range of deals; position statistics, time and `check`, a
//!   fingerprint of every search (equal before and after a change meant only to make it faster).
//! - `classify-range FIRST LAST [THREADS] [MAX_CELLS]`: exact classification of a range with threads.
//! - `lean DEAL CELLS [CAP] [old]`: prover measurements (`LAYERED=1` for the layered proof).
//! - `short A B [CELLS]`: short winning lines: moves and time per deal.
//! - `shorten A B [CELLS]`: the fast solver's lines shortened: moves before and after, CPU time.
//! - `tune START END STEP CELLS`: solve a sample of deals with other weights or dives.
//! - `beam DEAL CELLS WIDTH [MAX_POSITIONS]`: one beam search.
//! - `layerbeam DEAL CELLS WIDTH LAYER_CAP [MAX_POSITIONS]`: one layer beam.
//! - `probe DEAL CELLS [prove]`: one search by the solver.
//! - `solvecheck CAP [prove|oldprove]`: solve "deal cells" pairs read from stdin under a position cap.
//!
//! The micro-benchmark of the move generator is a criterion benchmark of the core
//! (`cargo bench -p fcanalyze-core --bench microbench`).

mod beam;
mod classify_range;
mod layerbeam;
mod lean;
mod probe;
mod range;
mod short;
mod shorten;
mod solvecheck;
mod tailmix;
mod tune;

/// A driver: it reads its arguments from index 1 on (index 0 is the subcommand's name, as a program's own
/// name was when each driver was an example of its own).
type Driver = fn(&[String]);

/// The subcommands: name, arguments, driver.
const COMMANDS: &[(&str, &str, Driver)] = &[
    ("range", "START END CELLS", range::run),
    (
        "classify-range",
        "FIRST LAST [THREADS] [MAX_CELLS]",
        classify_range::run,
    ),
    ("lean", "DEAL CELLS [CAP] [old]", lean::run),
    ("short", "A B [CELLS]", short::run),
    ("shorten", "A B [CELLS]", shorten::run),
    ("tailmix", "A B [CELLS] [CAP]", tailmix::run),
    ("tune", "START END STEP CELLS", tune::run),
    ("beam", "DEAL CELLS WIDTH [MAX_POSITIONS]", beam::run),
    (
        "layerbeam",
        "DEAL CELLS WIDTH LAYER_CAP [MAX_POSITIONS]",
        layerbeam::run,
    ),
    (
        "probe",
        "DEAL CELLS [prove|solve] [MAX_POSITIONS]",
        probe::run,
    ),
    ("solvecheck", "CAP [prove|oldprove]", solvecheck::run),
];

fn usage() -> String {
    let mut s = String::from("usage: fcanalyze-lab SUBCOMMAND ARGS...\n\nsubcommands:\n");
    for (name, args, _) in COMMANDS {
        s.push_str(&format!("  {name} {args}\n"));
    }
    s
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprint!("{}", usage());
        std::process::exit(2);
    };
    if name == "-h" || name == "--help" || name == "help" {
        print!("{}", usage());
        return;
    }
    match COMMANDS.iter().find(|(n, _, _)| n == name) {
        Some((_, _, run)) => run(&args),
        None => {
            eprint!("fcanalyze-lab: no subcommand {name:?}\n\n{}", usage());
            std::process::exit(2);
        }
    }
}
