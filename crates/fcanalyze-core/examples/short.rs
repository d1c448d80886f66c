//! Short lines for deals A..B: mean, median and max player moves, and the time per deal.
//! Usage: short A B [CELLS]   (env CAP=max positions, MS=time limit per deal)
use fccore::short::ShortSolver;
use fccore::*;
fn env<T: std::str::FromStr>(k: &str) -> Option<T> {
    std::env::var(k).ok().and_then(|v| v.parse().ok())
}
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let a: u64 = args[1].parse().unwrap();
    let b: u64 = args[2].parse().unwrap();
    let cells: usize = args.get(3).map(|x| x.parse().unwrap()).unwrap_or(4);
    let mut s = ShortSolver::new();
    if let Some(v) = env::<u32>("WG") {
        s.config.wg = v;
    }
    if let Some(v) = env::<u32>("WH") {
        s.config.wh = v;
    }
    if let Some(v) = env::<usize>("BEAM") {
        s.config.beam = v;
    }
    if let Some(v) = env::<u32>("SC") {
        s.config.shortcut = v;
    }
    s.config.free_home = std::env::var("FREEHOME").is_ok();
    if let Some(v) = env::<u32>("PASSES") {
        s.config.passes = v;
    }
    s.config.exact = std::env::var("EXACT").is_ok();
    if let Ok(w) = std::env::var("FW") {
        for (i, x) in w.split(',').enumerate() {
            s.config.fw[i] = x.parse().unwrap();
        }
    }
    if let Ok(w) = std::env::var("AFW") {
        s.config.afw = [0; 10];
        for (i, x) in w.split(',').enumerate() {
            s.config.afw[i] = x.parse().unwrap();
        }
    }
    let limits = Limits {
        max_positions: env("CAP").unwrap_or(2_000_000),
        max_millis: env("MS"),
    };
    let mut moves = vec![];
    let mut times = vec![];
    let mut pos = vec![];
    let mut unsolved = 0;
    let t = std::time::Instant::now();
    for d in a..=b {
        let r = s.solve(&Layout::deal(d).unwrap(), cells, limits).unwrap();
        times.push(r.elapsed_ms);
        pos.push(r.positions);
        if r.outcome == Outcome::Solved {
            moves.push(r.player_moves());
        } else {
            unsolved += 1;
        }
        if env::<u32>("VERBOSE").is_some() {
            println!(
                "{d} {:?} moves={} lb={} positions={} ms={:.1}",
                r.outcome,
                r.player_moves(),
                s.lower_bound,
                r.positions,
                r.elapsed_ms
            );
        }
    }
    moves.sort();
    times.sort_by(|x, y| x.partial_cmp(y).unwrap());
    pos.sort();
    let n = moves.len().max(1);
    let q = |v: &[f64], f: f64| v[((v.len() as f64 - 1.0) * f).round() as usize];
    println!(
        "deals={} solved={} unsolved={} moves mean={:.2} median={} max={} | ms/deal mean={:.1} median={:.1} p99={:.1} max={:.1} | positions median={} max={} | total {:.1}s",
        b - a + 1,
        moves.len(),
        unsolved,
        moves.iter().sum::<usize>() as f64 / n as f64,
        moves.get(moves.len() / 2).copied().unwrap_or(0),
        moves.last().copied().unwrap_or(0),
        times.iter().sum::<f64>() / times.len() as f64,
        q(&times, 0.5),
        q(&times, 0.99),
        times.last().unwrap(),
        pos[pos.len() / 2],
        pos.last().unwrap(),
        t.elapsed().as_secs_f64()
    );
}
