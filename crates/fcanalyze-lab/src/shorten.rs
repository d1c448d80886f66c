//! The fast solver's lines for deals A..B, shortened ([`fccore::Shortener`]): mean and max player moves
//! before and after, and the CPU time of the solves and of the shortening.
//!
//! Usage: fcanalyze-lab shorten A B [CELLS]
//!
//! Environment (all optional): WIDTH = the beams' width, BUDGET = positions per line (defaults:
//! `fccore::Shortening::default()`), FW = the beams' feature weights, CAP = most positions of each solve
//! (default 10,000,000), STEP = every STEP-th deal from A (a sample of a range), AUTOPLAY = the rules,
//! `safe` (default, SPEC §2) or `max`, VERBOSE = one line per deal: its moves before and after and a
//! fingerprint of the shortened line (equal before and after a change meant to leave the shortening as
//! it was), BASEBEAM = shorten the line of one beam of this width from the deal (the short search's
//! first pass alone) instead of the fast solver's.
//!
//! Times: the process's CPU time (user + system) around each phase; the machine may be shared.
use fccore::*;

fn env<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok().and_then(|v| v.parse().ok())
}

/// CPU time of this process in ms (user + system).
fn cpu_ms() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let f: Vec<&str> = s
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks: f64 = f.get(11).and_then(|x| x.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|x| x.parse().ok()).unwrap_or(0.0);
    ticks * 10.0
}

pub fn run(args: &[String]) {
    if args.len() < 3 {
        eprintln!("usage: shorten A B [CELLS]");
        std::process::exit(2);
    }
    let a: u64 = args[1].parse().expect("first deal");
    let b: u64 = args[2].parse().expect("last deal");
    let cells: usize = args.get(3).map_or(4, |x| x.parse().expect("cells"));
    let step: usize = env("STEP").unwrap_or(1);
    let d = Shortening::default();
    let mut budget = Shortening {
        width: env("WIDTH").unwrap_or(d.width),
        max_positions: env("BUDGET").unwrap_or(d.max_positions),
        ..d
    };
    if let Ok(v) = std::env::var("FW") {
        budget.weights.fill(0);
        for (i, x) in v.split(',').enumerate() {
            budget.weights[i] = x.parse().expect("comma-separated integer weights");
        }
    }
    let limits = Limits {
        max_positions: env("CAP").unwrap_or(10_000_000),
        max_millis: None,
    };
    let autoplay = Autoplay::parse(&std::env::var("AUTOPLAY").unwrap_or("safe".into())).unwrap();
    let verbose = std::env::var("VERBOSE").is_ok();
    let mut solver = Solver::new();
    let mut short = ShortSolver::new();
    let base_beam: Option<usize> = env("BASEBEAM");
    if let Some(w) = base_beam {
        short.config.beam = w;
        short.config.passes = 1;
        short.config.tails = 0;
    }
    let mut shortener = Shortener::new();
    let (mut before, mut after) = (vec![], vec![]);
    let (mut solve_ms, mut shorten_ms) = (0.0, 0.0);
    for deal in (a..=b).step_by(step) {
        let layout = Layout::deal(deal).unwrap().with_autoplay(autoplay);
        let c0 = cpu_ms();
        let r = match base_beam {
            Some(_) => short.solve(&layout, cells, limits).unwrap(),
            None => solver
                .search(&layout, cells, Strategy::Solve, limits)
                .unwrap(),
        };
        let c1 = cpu_ms();
        solve_ms += c1 - c0;
        if r.outcome != Outcome::Solved {
            continue;
        }
        let line = shortener
            .shorten(&layout, cells, &r.solution, budget)
            .unwrap();
        shorten_ms += cpu_ms() - c1;
        let n = line.iter().filter(|m| !m.auto).count();
        if verbose {
            println!(
                "{deal} before={} after={n} line={:016x}",
                r.player_moves(),
                crate::short::fingerprint(&line)
            );
        }
        before.push(r.player_moves());
        after.push(n);
    }
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len().max(1) as f64;
    let deals = ((b - a) / step as u64 + 1) as f64;
    println!(
        "deals {a}-{b}, {cells} cells, {} rules, width {} budget {}: {} solved",
        autoplay,
        budget.width,
        budget.max_positions,
        after.len()
    );
    println!(
        "moves: before mean {:.2} max {}; after mean {:.2} max {}",
        mean(&before),
        before.iter().max().unwrap_or(&0),
        mean(&after),
        after.iter().max().unwrap_or(&0)
    );
    println!(
        "cpu ms/deal: solve {:.3}, shorten {:.3}",
        solve_ms / deals,
        shorten_ms / deals
    );
}
