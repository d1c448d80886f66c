//! Solve a range of deals and print position statistics and the time taken.
//! Usage: range START END CELLS   (env W=comma weights of the best-first phase, CAP=max positions,
//! NODIVES=1 for the plain best-first search); `check` is a fingerprint of every search (positions and
//! line), equal before and after a change that should only make the search faster
use fccore::*;
pub fn run(args: &[String]) {
    let a: u64 = args[1].parse().unwrap();
    let b: u64 = args[2].parse().unwrap();
    let cells: usize = args[3].parse().unwrap();
    let mut s = Solver::new();
    if let Ok(w) = std::env::var("W") {
        let v: Vec<i32> = w.split(',').map(|x| x.parse().unwrap()).collect();
        let mut w = [0; NFEATURES];
        w[..v.len()].copy_from_slice(&v);
        s.weights = Weights(w);
    }
    if std::env::var("NODIVES").is_ok() {
        s.dives.clear();
    }
    let cap = std::env::var("CAP")
        .map(|x| x.parse().unwrap())
        .unwrap_or(5_000_000);
    let t = std::time::Instant::now();
    let (mut tot, mut solved, mut moves, mut maxp) = (0u64, 0u64, 0usize, 0u64);
    let mut check = 0xcbf2_9ce4_8422_2325u64;
    let mut ps = vec![];
    for d in a..=b {
        let r = s
            .search(
                &Layout::deal(d).unwrap(),
                cells,
                Strategy::Solve,
                Limits {
                    max_positions: cap,
                    max_millis: None,
                },
            )
            .unwrap();
        tot += r.positions;
        ps.push(r.positions);
        // A fingerprint of what every search did (positions and line), to check that a change meant
        // to be faster leaves the searches as they were.
        for x in [r.positions, r.solution.len() as u64]
            .into_iter()
            .chain(r.solution.iter().map(|m| {
                (m.mv.from as u64) << 24
                    | (m.mv.to as u64) << 16
                    | (m.mv.count as u64) << 8
                    | m.auto as u64
            }))
        {
            check = (check ^ x).wrapping_mul(0x100_0000_01b3);
        }
        if r.positions > maxp {
            maxp = r.positions;
        }
        if r.outcome == Outcome::Solved {
            solved += 1;
            moves += r.player_moves();
        }
    }
    ps.sort();
    let n = (b - a + 1) as f64;
    println!(
        "deals={} solved={} mean_pos={:.0} median={} p90={} p99={} max={} mean_moves={:.1} time={:.2}s check={:016x}",
        n,
        solved,
        tot as f64 / n,
        ps[ps.len() / 2],
        ps[ps.len() * 9 / 10],
        ps[ps.len() * 99 / 100],
        maxp,
        moves as f64 / solved as f64,
        t.elapsed().as_secs_f64(),
        check
    );
}
