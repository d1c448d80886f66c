//! Short winning lines for deals A..B: mean, median and max player moves (supermoves count once,
//! automatic moves not at all) and the time per deal.
//!
//! Usage: fcanalyze-lab short A B [CELLS]
//!
//! Environment (all optional): AUTOPLAY = the rules, `safe` (default, SPEC §2) or `max`, CAP = most
//! positions per deal (default 10,000,000), MS = time limit per deal in ms, STEP = every STEP-th deal
//! from A (a sample of a range), VERBOSE = one line per deal (with its CPU time and a fingerprint of its
//! line, equal before and after a change meant to leave the search as it was); to try other settings
//! of the search: BEAM = width of the first beam pass, PASSES = beam passes (each twice as wide), FW
//! and MFW = the beam's feature weights under the safe and the max rules, TAILS and TBEAM = beams from
//! the positions cutting the best line into TAILS parts, SC = shortcut depth, and an A* phase with WG,
//! WH, AFW, EXACT (see `fccore::Config`); SHORTEST = start from the settings of `fcanalyze solve --short
//! --prove` (`ShortConfig::shortest`).
//!
//! Times: wall clock, and the thread's CPU time where Linux reports it (the machine may be shared).
use fccore::ShortSolver;
use fccore::*;

fn env<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok().and_then(|v| v.parse().ok())
}

fn weights(k: &str, w: &mut [i32]) {
    if let Ok(v) = std::env::var(k) {
        w.fill(0);
        for (i, x) in v.split(',').enumerate() {
            w[i] = x.parse().expect("comma-separated integer weights");
        }
    }
}

/// CPU time of this thread in ms (Linux), if available.
fn cpu_ms() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e6)
}

/// A fingerprint of a line (FNV-1a over its moves and their automatic marks), to check that a change
/// meant to leave a search as it was returns the same lines.
pub(crate) fn fingerprint(line: &[SolutionMove]) -> u64 {
    line.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, m| {
        let x = (m.mv.from as u64) << 24
            | (m.mv.to as u64) << 16
            | (m.mv.count as u64) << 8
            | m.auto as u64;
        (h ^ x).wrapping_mul(0x100_0000_01b3)
    })
}

fn quantile(v: &[f64], f: f64) -> f64 {
    v[((v.len() as f64 - 1.0) * f).round() as usize]
}

pub fn run(args: &[String]) {
    if args.len() < 3 {
        eprintln!("usage: short A B [CELLS]");
        std::process::exit(2);
    }
    let a: u64 = args[1].parse().expect("first deal");
    let b: u64 = args[2].parse().expect("last deal");
    let cells: usize = args.get(3).map_or(4, |x| x.parse().expect("cells"));
    let step: usize = env("STEP").unwrap_or(1);
    let mut s = ShortSolver::new();
    if std::env::var("SHORTEST").is_ok() {
        s.config = ShortConfig::shortest();
    }
    let c = &mut s.config;
    c.beam = env("BEAM").unwrap_or(c.beam);
    c.passes = env("PASSES").unwrap_or(c.passes);
    c.shortcut = env("SC").unwrap_or(c.shortcut);
    c.tails = env("TAILS").unwrap_or(c.tails);
    c.tail_beam = env("TBEAM").unwrap_or(c.tail_beam);
    c.wg = env("WG").unwrap_or(c.wg);
    c.wh = env("WH").unwrap_or(c.wh);
    c.exact |= std::env::var("EXACT").is_ok();
    weights("FW", &mut c.fw);
    weights("MFW", &mut c.max_fw);
    weights("AFW", &mut c.afw);
    let limits = Limits {
        max_positions: env("CAP").unwrap_or(10_000_000),
        max_millis: env("MS"),
    };
    let autoplay = Autoplay::parse(&std::env::var("AUTOPLAY").unwrap_or("safe".into())).unwrap();
    let verbose = std::env::var("VERBOSE").is_ok();
    let (mut moves, mut wall, mut cpu, mut other) = (vec![], vec![], vec![], vec![]);
    let t = std::time::Instant::now();
    for d in (a..=b).step_by(step) {
        let c0 = cpu_ms();
        let layout = Layout::deal(d).unwrap().with_autoplay(autoplay);
        let r = s.solve(&layout, cells, limits).unwrap();
        let used = c0.zip(cpu_ms()).map(|(c0, c1)| c1 - c0);
        cpu.extend(used);
        wall.push(r.elapsed_ms);
        match r.outcome {
            Outcome::Solved => moves.push(r.player_moves()),
            o => other.push((d, o)),
        }
        if verbose {
            println!(
                "{d} {} moves={} positions={} ms={:.1} lower_bound={} cpu_ms={:.1} line={:016x}",
                r.outcome.as_str(),
                r.player_moves(),
                r.positions,
                r.elapsed_ms,
                s.lower_bound,
                used.unwrap_or(f64::NAN),
                fingerprint(&r.solution)
            );
        }
    }
    moves.sort();
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    let n = moves.len().max(1) as f64;
    println!(
        "deals {a}-{b}, {cells} cells: {} solved, {} not ({:?})",
        moves.len(),
        other.len(),
        &other[..other.len().min(10)]
    );
    if !moves.is_empty() {
        println!(
            "moves: mean {:.2}  median {}  max {}",
            moves.iter().sum::<usize>() as f64 / n,
            moves[moves.len() / 2],
            moves[moves.len() - 1]
        );
    }
    println!(
        "wall ms/deal: mean {:.1}  median {:.1}  p99 {:.1}  max {:.1}",
        wall.iter().sum::<f64>() / wall.len() as f64,
        quantile(&wall, 0.5),
        quantile(&wall, 0.99),
        wall[wall.len() - 1]
    );
    if cpu.len() == wall.len() {
        println!(
            "cpu ms/deal:  mean {:.1}  median {:.1}  p99 {:.1}  max {:.1}",
            cpu.iter().sum::<f64>() / cpu.len() as f64,
            quantile(&cpu, 0.5),
            quantile(&cpu, 0.99),
            cpu[cpu.len() - 1]
        );
    }
    println!("total {:.1} s", t.elapsed().as_secs_f64());
}
