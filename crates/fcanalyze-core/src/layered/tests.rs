use super::*;
use crate::layer::{progress, LAYERS};
use crate::position::Position;
use crate::prover::Rules;

use super::code::{self, tag, untag, untagged, Frame, CODE, LEAN};
use super::level::split_points;
use super::levels::{BY_ORBITS, JOINED, SHARED_FIRSTS, SHARED_LEVELS, TWINS_REPLAYED};
use super::spill::{remove_orphans, SpillDir};
use super::table::Table;
use crate::prover::NO;

fn kept(max_kept: u64) -> Bounds {
    Bounds {
        max_kept,
        max_stack_bytes: usize::MAX,
        max_set_len: usize::MAX,
        trades: true,
        level_chunk: 1 << 20,
        min_free_disk: 0,
        threads: 1,
        // Checkpoints at the start of each layer only (and at the end of a level of a group
        // searched by levels).
        save_every_ms: u64::MAX,
        cone: None,
    }
}

/// Deal 2 with the cards below 8 home and no free cell: a position the layered proof wins within a
/// few layers, for the lines of wins.
fn late_position() -> Layout {
    let mut late = Layout::deal(2).unwrap();
    for col in late.columns.iter_mut() {
        col.retain(|&c| crate::card::rank(c) >= 7);
    }
    late.foundations = [7; 4];
    late
}

/// Limits of `max_positions` positions and no time limit.
fn limits(max_positions: u64) -> Limits {
    Limits {
        max_positions,
        max_millis: None,
    }
}

/// The late position, bounds under which its proof forgets its lines (so its win is searched for again
/// toward it), and its search made at once, not resumable.
fn late_line() -> (Layout, Bounds, LayeredResult) {
    let late = late_position();
    let bounds = kept(1 << 12);
    let at_once = search(&late, 0, limits(2_000_000), None, 100, bounds, None).unwrap();
    (late, bounds, at_once)
}

/// Deals 1..=`deals` with 0, 1 and 2 cells searched within `bounds` (`before` runs before each such
/// search) and with every group in its set (`kept(u64::MAX)`), both flushing every `flush` keys: the
/// same outcomes, and the same counts where unsolvable. Returns the proofs compared.
fn same_verdicts(
    deals: u64,
    limits: Limits,
    flush: usize,
    bounds: Bounds,
    mut before: impl FnMut(u64, usize),
) -> usize {
    let mut proofs = 0;
    for deal in 1..=deals {
        for k in [0usize, 1, 2] {
            let layout = Layout::deal(deal).unwrap();
            let a = search(&layout, k, limits, None, flush, kept(u64::MAX), None).unwrap();
            before(deal, k);
            let b = search(&layout, k, limits, None, flush, bounds, None).unwrap();
            assert_eq!(a.outcome, b.outcome, "deal {deal} k={k}");
            if a.outcome == LayeredOutcome::Unsolvable {
                assert_eq!(b.positions, a.positions, "deal {deal} k={k}");
                proofs += 1;
            }
        }
    }
    proofs
}

/// Deal 11982's layered proof with 4 cells (its seeds flushed every 500 keys) within `limits`: with
/// every finished layer's file kept for lines, and with none (the seeds written lean from the start).
fn with_and_without_kept_files(limits: Limits) -> (LayeredResult, LayeredResult) {
    let deal = Layout::deal(11982).unwrap();
    let with = search(&deal, 4, limits, None, 500, kept(u64::MAX), None).unwrap();
    let without = search(&deal, 4, limits, None, 500, kept(0), None).unwrap();
    (with, without)
}

/// Places that differ by a pattern a linear fold of the high word onto the low one cancels (a card's
/// places in the high word, and the two cards they line up with in the low one, changed together)
/// get different hashes: with the old fold, all 16,384 of this family shared one.
#[test]
fn structured_places_spread_over_the_table() {
    let n = 14;
    let mut hashes: Vec<u64> = (0..1u32 << n)
        .map(|mask| {
            let mut places = 0u128;
            for t in 0..n {
                if mask >> t & 1 == 1 {
                    places ^= (0b11u128 << (64 + 2 * t)) ^ (0b11u128 << (2 * t + 29));
                }
            }
            Table::hash(places)
        })
        .collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), 1 << n);
    let mut table = Table::new(104);
    for mask in 0..1u32 << n {
        let mut places = 0u128;
        for t in 0..n {
            if mask >> t & 1 == 1 {
                places ^= (0b11u128 << (64 + 2 * t)) ^ (0b11u128 << (2 * t + 29));
            }
        }
        assert!(table.insert(places, false));
    }
    assert_eq!(table.len, 1 << n);
}

/// A table keeps each position once, through its growth and its split into shards, and a scan
/// takes every position inserted untaken exactly once, even when the table grows during the scan.
/// Places of 62 bits (8-byte slots), 80 (11) and 104 (14).
#[test]
fn table_scans_take_every_waiting_position_once() {
    for width in [62u32, 80, 104] {
        let mut t = Table::new(width);
        let mut waiting = std::collections::HashSet::new();
        let mut x = 1u64;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Few distinct values, so that some come again; spread over the width.
            let v = (x >> 42) as u128;
            (v | v << (width - 22)) & ((1 << width) - 1)
        };
        let put = |t: &mut Table, waiting: &mut std::collections::HashSet<u128>, v: u128| {
            let taken = v % 3 != 0;
            let new = t.insert(v, taken);
            if new && !taken {
                waiting.insert(v);
            }
            new
        };
        let mut inserted = 0;
        for _ in 0..1_200_000 {
            inserted += put(&mut t, &mut waiting, next()) as usize;
        }
        assert!(inserted > 1_000_000 && inserted < 1_200_000, "{inserted}");
        assert_eq!(t.len, inserted);
        assert!(t.bits > 0, "the table split into shards");
        let mut cursor = (0, 0);
        let mut taken = 0;
        while !waiting.is_empty() {
            match t.take_next(&mut cursor) {
                Some(v) => {
                    assert!(waiting.remove(&v), "{v:x} taken twice, or never put");
                    taken += 1;
                    // Growth during the scan.
                    if taken % 2 == 0 {
                        inserted += put(&mut t, &mut waiting, next()) as usize;
                        inserted += put(&mut t, &mut waiting, next()) as usize;
                    }
                }
                None => cursor = (0, 0),
            }
        }
        assert_eq!(t.len, inserted);
        assert_eq!(t.take_next(&mut (0, 0)), None);
        assert_eq!(t.lens.iter().sum::<usize>(), inserted);
    }
}

/// Keys coded a word at a time (BMI2) give the places coded a card at a time, and decode back; tags
/// ride under codes without changing their order.
#[test]
fn codes_of_words_and_of_cards_agree() {
    let mut kids = Vec::new();
    let mut checked = 0;
    for deal in 1..=40u64 {
        let layout = Layout::deal(deal).unwrap();
        let rules = Rules::new(&layout, 2);
        let (mut p, _) = Position::from_layout(&layout, 2).unwrap();
        p.settle(None);
        // A walk of a few hundred moves, always the last child.
        let mut key = *p.key();
        for _ in 0..200 {
            let f = Frame::of(&key);
            let x = f.encode_cards(&key);
            assert_eq!(f.decode_cards(x), key);
            assert_eq!(f.encode(&key), x);
            assert_eq!(f.decode(x), key);
            // A code of 52 free cards fits under its tag, which comes back whole, and tagged codes
            // order as their codes, whatever their tags.
            assert!(x < 1 << 104);
            for m in [0, 51, NO] {
                assert_eq!(untag(tag(x, m)), (x, m));
                assert_eq!(untagged(tag(x, m)), untagged(tag(x, NO)));
                assert!(tag(x, m) < tag(x + 1, NO) && tag(x + 1, m) > tag(x, 0));
            }
            checked += 1;
            rules.children(&rules.decode(&key), &mut kids);
            match kids.last() {
                Some(k) if *k != [0; 3] => key = *k,
                _ => break,
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}

/// The spill directory of a process that is gone is removed, a live process's is kept. In a
/// directory of the test's own: a search elsewhere on the machine removes orphans of the system's
/// temporary directory at any time.
#[test]
fn spill_directories_of_gone_processes_are_removed() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let base = std::env::temp_dir().join(format!("fcanalyze-test-orphans-{}", std::process::id()));
    let orphan = base.join("fcanalyze-layered-999999999-1");
    let live = base.join(format!("fcanalyze-layered-{}-1", std::process::id()));
    for d in [&orphan, &live] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("layer-001.keys"), [0u8; 20]).unwrap();
    }
    remove_orphans(&base);
    assert!(!orphan.exists());
    assert!(live.join("layer-001.keys").exists());
    std::fs::remove_dir_all(&base).unwrap();
}

/// A stack bounded to one position (the rest wait in the set and are found by scans) gives the
/// same counts as an unbounded one.
#[test]
fn a_bounded_stack_counts_the_same() {
    let limits = Limits {
        max_positions: 300_000,
        max_millis: None,
    };
    let small = Bounds {
        max_kept: u64::MAX,
        max_stack_bytes: 1,
        max_set_len: usize::MAX,
        trades: true,
        level_chunk: 1 << 20,
        min_free_disk: 0,
        threads: 1,
        save_every_ms: 0,
        cone: None,
    };
    let deal = Layout::deal(11982).unwrap();
    let r = search(&deal, 4, limits, None, 5000, small, None).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Unsolvable);
    assert_eq!(r.positions, 61_643);
    let mut proofs = 0;
    for deal in 1..=20u64 {
        for k in [0usize, 1] {
            let layout = Layout::deal(deal).unwrap();
            let a = search(&layout, k, limits, None, 5000, kept(u64::MAX), None).unwrap();
            let b = search(&layout, k, limits, None, 5000, small, None).unwrap();
            if a.outcome == LayeredOutcome::Unsolvable {
                assert_eq!(b.outcome, LayeredOutcome::Unsolvable, "deal {deal} k={k}");
                assert_eq!(b.positions, a.positions, "deal {deal} k={k}");
                proofs += 1;
            } else {
                assert_ne!(b.outcome, LayeredOutcome::Unsolvable, "deal {deal} k={k}");
            }
        }
    }
    assert!(proofs > 10, "{proofs} proofs");
}

/// Groups searched by levels once their set passes a few bytes (as when the memory runs out) give
/// the same counts as groups held in their sets, and the same win with its line.
#[test]
fn groups_searched_by_levels_count_the_same() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    for threads in [1, 2] {
        // Two threads search by levels at once, each with files of its own.
        let levels = Bounds {
            max_kept: u64::MAX,
            max_stack_bytes: usize::MAX,
            max_set_len: 50,
            trades: true,
            level_chunk: 1000,
            min_free_disk: 0,
            threads,
            save_every_ms: 0,
            cone: None,
        };
        let deal = Layout::deal(11982).unwrap();
        let r = search(&deal, 4, limits, None, 5000, levels, None).unwrap();
        assert_eq!(
            (r.outcome, r.positions),
            (LayeredOutcome::Unsolvable, 61_643)
        );
        let proofs = same_verdicts(8, limits, 5000, levels, |_, _| {});
        assert!(proofs > 8, "{proofs} proofs");
        if threads == 2 {
            // A thread left without a group helped the other's group by levels, from its first
            // level on.
            assert!(SHARED_LEVELS.load(std::sync::atomic::Ordering::Relaxed) > 0);
            assert!(SHARED_FIRSTS.load(std::sync::atomic::Ordering::Relaxed) > 0);
        }
        let late = late_position();
        let r = search(&late, 0, limits, None, 100, levels, None).unwrap();
        assert_eq!(r.outcome, LayeredOutcome::Won);
        assert!(!r.chain.is_empty());
    }
}

/// Groups searched by the orbits of their trades (docs/reductions.md, "Trades within a group") count
/// every position: deals whose groups have trades, under both rules of automatic moves, with one
/// thread or two, give the count of the search that holds every group in its set, and the same
/// without trades and with lean records, while the groups by orbits hold fewer codes than the
/// positions they count and send fewer records than the seeds those stand for.
#[test]
fn groups_searched_by_orbits_count_the_same() {
    use std::sync::atomic::Ordering::Relaxed;
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    for autoplay in [
        crate::autoplay::Autoplay::Safe,
        crate::autoplay::Autoplay::Max,
    ] {
        for (deal, k) in [(11982, 4), (11982, 3), (9544, 2), (200, 1)] {
            let layout = Layout::deal(deal).unwrap().with_autoplay(autoplay);
            let whole = search(&layout, k, limits, None, 5000, kept(u64::MAX), None).unwrap();
            let what = format!("deal {deal} with {k} cells, {autoplay:?}");
            assert_eq!(whole.outcome, LayeredOutcome::Unsolvable, "{what}");
            for threads in [1, 2] {
                let levels = Bounds {
                    max_set_len: 50,
                    level_chunk: 1000,
                    threads,
                    save_every_ms: 0,
                    cone: None,
                    ..kept(u64::MAX)
                };
                let before = BY_ORBITS.each_ref().map(|c| c.load(Relaxed));
                let r = search(&layout, k, limits, None, 5000, levels, None).unwrap();
                let after = BY_ORBITS.each_ref().map(|c| c.load(Relaxed));
                assert_eq!(
                    (r.outcome, r.positions),
                    (whole.outcome, whole.positions),
                    "{what}"
                );
                let (codes, positions) = (after[0] - before[0], after[1] - before[1]);
                assert!(
                    codes > 0 && codes < positions,
                    "{what}: {codes} codes, {positions}"
                );
                // The children of orbits were sent as records with trades, fewer than the seeds
                // they stand for.
                let (records, seeds) = (after[2] - before[2], after[3] - before[3]);
                assert!(
                    records > 0 && records < seeds,
                    "{what}: {records} records, {seeds} seeds"
                );
                // The same with lean records from the start (no lines kept), and without trades.
                let lean = Bounds {
                    max_kept: 0,
                    ..levels
                };
                let plain = Bounds {
                    trades: false,
                    ..levels
                };
                for (bounds, how) in [(lean, "lean"), (plain, "no trades")] {
                    let r = search(&layout, k, limits, None, 5000, bounds, None).unwrap();
                    assert_eq!(
                        (r.outcome, r.positions),
                        (whole.outcome, whole.positions),
                        "{what}, {how}"
                    );
                }
            }
        }
    }
}

/// Deal 9544 with 2 cells has twin groups (docs/reductions.md): searched by levels, each owner's search
/// expands its follower too, under either rule of automatic moves, with one thread or two, and killed
/// within its layers and resumed: the count of the search that holds every group in its set.
#[test]
fn twin_groups_count_the_same() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let dir = std::env::temp_dir().join(format!("fcanalyze-test-twins-{}", std::process::id()));
    for autoplay in [
        crate::autoplay::Autoplay::Safe,
        crate::autoplay::Autoplay::Max,
    ] {
        let deal = Layout::deal(9544).unwrap().with_autoplay(autoplay);
        let whole = search(&deal, 2, limits, None, 5000, kept(u64::MAX), None).unwrap();
        assert_eq!(whole.outcome, LayeredOutcome::Unsolvable, "{autoplay:?}");
        if autoplay == crate::autoplay::Autoplay::Safe {
            assert_eq!(whole.positions, 106_594);
        }
        for threads in [1, 2] {
            // Without trades, which a group takes before its twin.
            let levels = Bounds {
                max_set_len: 50,
                trades: false,
                level_chunk: 1000,
                threads,
                save_every_ms: 0,
                cone: None,
                ..kept(u64::MAX)
            };
            let replayed = || TWINS_REPLAYED.load(std::sync::atomic::Ordering::Relaxed);
            let before = replayed();
            let r = search(&deal, 2, limits, None, 5000, levels, None).unwrap();
            assert_eq!((r.outcome, r.positions), (whole.outcome, whole.positions));
            if autoplay == crate::autoplay::Autoplay::Safe {
                assert!(
                    replayed() > before + 10,
                    "{} followers",
                    replayed() - before
                );
            }
            let (mut runs, mut listed) = (0, false);
            let resumable = Bounds {
                save_every_ms: 30,
                cone: None,
                ..levels
            };
            let r = loop {
                KILL_WITHIN.set(Some(5));
                let r = search(&deal, 2, limits, None, 5000, resumable, Some(&dir));
                KILL_WITHIN.set(None);
                runs += 1;
                assert!(runs < 2000, "no progress after {runs} runs");
                match r {
                    Ok(r) => break r,
                    Err(_) => {
                        let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
                        let c = Checkpoint::parse(&text).unwrap();
                        assert_eq!(Checkpoint::parse(&c.to_text()), Some(c.clone()));
                        listed |= c.by_levels.iter().any(|g| g.twin);
                    }
                }
            };
            assert!(runs > 3, "{runs} runs");
            if autoplay == crate::autoplay::Autoplay::Safe {
                assert!(listed, "no checkpoint listed an owner with its follower");
            }
            assert_eq!((r.outcome, r.positions), (whole.outcome, whole.positions));
        }
    }
}

/// The files kept for lines forgotten in the middle of a layer (the layer's file renamed while its
/// groups are searched) leave every later reader of that file its seeds: an owner of twins compares
/// its follower's seeds after the rename. A run of `make results-32k` failed there (deal 24966 with 1
/// cell: "layer-051.seeds: No such file or directory"). Each kept budget below forgets the lines at
/// another point of the search.
#[test]
fn lines_forgotten_within_a_layer_of_twins_count_the_same() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let deal = Layout::deal(9544).unwrap();
    // Without trades, which a group takes before its twin.
    let levels = Bounds {
        max_set_len: 50,
        trades: false,
        level_chunk: 1000,
        ..kept(u64::MAX)
    };
    let whole = search(&deal, 2, limits, None, 5000, levels, None).unwrap();
    assert_eq!(
        (whole.outcome, whole.positions),
        (LayeredOutcome::Unsolvable, 106_594)
    );
    let replayed = || TWINS_REPLAYED.load(std::sync::atomic::Ordering::Relaxed);
    for eighth in 1..8 {
        for threads in [1, 2] {
            let bounds = Bounds {
                max_kept: whole.peak_disk * eighth / 8,
                threads,
                ..levels
            };
            let before = replayed();
            let r = search(&deal, 2, limits, None, 5000, bounds, None)
                .unwrap_or_else(|e| panic!("{eighth}/8 of the files kept, {threads} threads: {e}"));
            assert_eq!((r.outcome, r.positions), (whole.outcome, whole.positions));
            assert!(replayed() > before, "no follower taken on");
        }
    }
}

/// Threads that change from layer to layer (lent to the process while its proofs run) give the same
/// counts and wins: the seeds buffered for later layers when the threads change are all written.
#[test]
fn threads_changed_between_layers_count_the_same() {
    let limits = Limits {
        max_positions: 300_000,
        max_millis: None,
    };
    // Buffers never full, so that the seeds of later layers wait in them across layers; groups by
    // levels past 50 positions, where the idle threads help.
    let flush = 1 << 20;
    let levels = Bounds {
        max_set_len: 50,
        trades: true,
        level_chunk: 1000,
        ..kept(u64::MAX)
    };
    let plan = |first: usize| {
        THREAD_PLAN.with(|p| *p.borrow_mut() = (first..first + LAYERS).map(|l| 1 + l % 3).collect())
    };
    let deal = Layout::deal(11982).unwrap();
    plan(0);
    let r = search(&deal, 4, limits, None, flush, levels, None).unwrap();
    // Every layer from the start's took its threads.
    let left = THREAD_PLAN.with(|p| p.borrow().len());
    assert!(left < 20, "{left} left");
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    let proofs = same_verdicts(6, limits, flush, levels, |deal, k| plan(deal as usize + k));
    let late = late_position();
    plan(1);
    let r = search(&late, 0, limits, None, flush, levels, None).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Won);
    assert!(!r.chain.is_empty());
    assert!(proofs > 5, "{proofs} proofs");
    THREAD_PLAN.with(|p| p.borrow_mut().clear());
}

/// Threads that join a layer after its start (every layer started with one of the proof's two
/// threads, as when the searches beside it end within the layer) help its groups searched by levels,
/// and give the same counts and wins, resumed from a checkpoint or not.
#[test]
fn threads_that_join_within_a_layer_count_the_same() {
    let limits = Limits {
        max_positions: 300_000,
        max_millis: None,
    };
    let levels = Bounds {
        max_set_len: 50,
        trades: true,
        level_chunk: 1000,
        threads: 2,
        save_every_ms: 0,
        cone: None,
        ..kept(u64::MAX)
    };
    let one_each = || THREAD_PLAN.with(|p| *p.borrow_mut() = vec![1; 4 * LAYERS]);
    let joined = || JOINED.load(std::sync::atomic::Ordering::Relaxed);
    let deal = Layout::deal(11982).unwrap();
    one_each();
    let before = joined();
    let r = search(&deal, 4, limits, None, 1 << 20, levels, None).unwrap();
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    assert!(joined() > before, "no thread joined");
    // Stopped by its budget part-way and resumed, each time with threads joining.
    let dir = std::env::temp_dir().join(format!("fcanalyze-test-join-{}", std::process::id()));
    let few = Limits {
        max_positions: 30_000,
        ..limits
    };
    one_each();
    let r = search(&deal, 4, few, None, 500, levels, Some(&dir)).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Positions));
    one_each();
    let r = search(&deal, 4, limits, None, 500, levels, Some(&dir)).unwrap();
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    assert!(!dir.exists());
    let proofs = same_verdicts(6, limits, 1 << 20, levels, |_, _| one_each());
    assert!(proofs > 5, "{proofs} proofs");
    one_each();
    let r = search(&late_position(), 0, limits, None, 100, levels, None).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Won);
    assert!(!r.chain.is_empty());
    THREAD_PLAN.with(|p| p.borrow_mut().clear());
}

/// A search whose spill files would leave less free disk space than it must ends undecided for want
/// of disk, not with an error; with the space, the same search is a proof.
#[test]
fn a_search_short_of_disk_is_undecided() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let deal = Layout::deal(11982).unwrap();
    let mut bounds = kept(u64::MAX);
    let r = search(&deal, 4, limits, None, 500, bounds, None).unwrap();
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    bounds.min_free_disk = u64::MAX / 4;
    let r = search(&deal, 4, limits, None, 500, bounds, None).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Disk));
    assert!(r.positions < 61_643);
}

/// A search by levels needs the disk its files take at their peak and room for one more write (a
/// chunk of codes, a flush of seeds), no more: on a disk of that size it ends as on a larger one, and
/// on a smaller one it ends undecided for want of disk. (A level's merge used to ask first for room
/// for all the runs it merges, which its runs already held: on this disk it gave up, and on a disk
/// that compresses the files it gave up far from full.)
#[test]
fn a_search_by_levels_needs_no_more_disk_than_its_files_take() {
    use super::spill::{TestDisk, TEST_DISKS};
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let bounds = Bounds {
        max_set_len: 50,
        level_chunk: 100,
        ..kept(0)
    };
    // Seeds flushed every 50 keys: the largest write the search makes is small beside a level's runs.
    let flush = 50;
    let deal = Layout::deal(11982).unwrap();
    let dir = std::env::temp_dir().join(format!("fcanalyze-test-peak-{}", std::process::id()));
    let on_disk = |size: u64| {
        let _ = std::fs::remove_dir_all(&dir);
        let mut disks = TEST_DISKS.lock().unwrap();
        disks.retain(|d| d.dir != dir);
        disks.push(TestDisk {
            dir: dir.clone(),
            size,
            peak: 0,
        });
        drop(disks);
        let r = search(&deal, 4, limits, None, flush, bounds, Some(&dir)).unwrap();
        let peak = TEST_DISKS
            .lock()
            .unwrap()
            .iter()
            .find(|d| d.dir == dir)
            .map_or(0, |d| d.peak);
        (r, peak)
    };
    let (r, peak) = on_disk(u64::MAX);
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    assert!(peak > 0, "no file seen");
    let write = (bounds.level_chunk * CODE).max(flush * code::RECORD) as u64;
    let (r, _) = on_disk(peak + write);
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643),
        "on a disk of {peak} + {write} bytes"
    );
    let (r, _) = on_disk(peak / 2);
    assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Disk));
    let _ = std::fs::remove_dir_all(&dir);
    TEST_DISKS.lock().unwrap().retain(|d| d.dir != dir);
}

/// A resumable search that runs out of a budget keeps its files: run again with the budget mended (a
/// larger position budget, a freed disk) it goes on from its last checkpoint to the same proof, and
/// its files go then.
#[test]
fn a_budget_keeps_the_files_of_a_resumable_search() {
    let deal = Layout::deal(11982).unwrap();
    let dir = std::env::temp_dir().join(format!("fcanalyze-test-budget-{}", std::process::id()));
    let (few, all) = (
        Limits {
            max_positions: 20_000,
            max_millis: None,
        },
        Limits {
            max_positions: u64::MAX,
            max_millis: None,
        },
    );
    let r = search(&deal, 4, few, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Positions));
    let layer = |dir: &Path| {
        let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
        Checkpoint::parse(&text).unwrap().layer
    };
    // Its checkpoint is past the start's layer: a run again does not start over.
    let first = layer(&dir);
    let (mut start, _) = Position::from_layout(&deal, 4).unwrap();
    start.settle(None);
    assert!(first > progress(start.key()), "{first}");
    // Short of disk: undecided, and the files stay.
    DISK_SIZE.set(Some(1 << 16));
    let r = search(&deal, 4, all, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
    DISK_SIZE.set(None);
    assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Disk));
    assert!(layer(&dir) >= first);
    let r = search(&deal, 4, all, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    assert!(!dir.exists());
}

/// A disk too small for the files kept for lines and the later layers' seeds together: the kept files
/// go, and the search goes on to the same proof; on a disk too small for the seeds alone, it ends
/// undecided for want of disk.
#[test]
fn the_kept_files_go_before_the_disk_runs_out() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let deal = Layout::deal(11982).unwrap();
    let (whole, without) = with_and_without_kept_files(limits);
    assert!(
        whole.peak_disk > without.peak_disk,
        "{} {}",
        whole.peak_disk,
        without.peak_disk
    );
    let run = |size: u64| {
        DISK_SIZE.set(Some(size));
        let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), None).unwrap();
        DISK_SIZE.set(None);
        r
    };
    let r = run(without.peak_disk + (whole.peak_disk - without.peak_disk) / 2);
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    assert!(r.peak_disk < whole.peak_disk);
    let r = run(without.peak_disk / 2);
    assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Disk));
    // Killed in the layer in which the kept files went (that layer's file then transient), the
    // resumed search ends with the same proof.
    let dir = std::env::temp_dir().join(format!("fcanalyze-test-forget-{}", std::process::id()));
    let size = without.peak_disk + (whole.peak_disk - without.peak_disk) / 2;
    DISK_SIZE.set(Some(size));
    KILL_ON_FORGET.set(true);
    let killed = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir));
    KILL_ON_FORGET.set(false);
    assert!(killed.is_err());
    let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
    let c = Checkpoint::parse(&text).unwrap();
    let sd = SpillDir(dir.clone(), true);
    assert!(c.keep && c.kept_layers.iter().any(|&l| !sd.kept(l).exists()));
    assert!(!sd.file(c.layer).exists() && sd.kept(LAYERS).exists());
    let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
    DISK_SIZE.set(None);
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    assert!(!dir.exists());
}

/// A disk that fills although the free-disk checks passed (another writer, another thread took the
/// room): the write that fails ends the search undecided for want of disk, its files kept, and the
/// search resumed on a freed disk ends with the same proof. A full disk (ENOSPC) is told apart from
/// other failures of the files.
#[test]
fn a_disk_that_fills_anyway_ends_the_search_undecided() {
    let full = super::spill::io_error(Path::new("x"), std::io::Error::from_raw_os_error(28));
    assert!(matches!(full, crate::error::Error::DiskFull(_)), "{full}");
    let other = super::spill::io_error(Path::new("x"), std::io::Error::from_raw_os_error(5));
    assert!(matches!(other, crate::error::Error::Io(_)), "{other}");
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let deal = Layout::deal(11982).unwrap();
    let dir = std::env::temp_dir().join(format!("fcanalyze-test-full-{}", std::process::id()));
    FULL_AFTER.set(Some(40));
    let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir));
    FULL_AFTER.set(None);
    let r = r.unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Disk));
    assert!(r.positions < 61_643, "{}", r.positions);
    assert!(dir.join(CHECKPOINT_FILE).exists());
    let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
    assert_eq!(
        (r.outcome, r.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    assert!(!dir.exists());
}

/// Past the disk budget for lines the search goes on, with the same count, and a win comes without
/// a line.
#[test]
fn lines_forgotten_past_the_disk_budget() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let deal = Layout::deal(11982).unwrap();
    for max_kept in [0, 1 << 12, u64::MAX] {
        let r = search(&deal, 4, limits, None, 500, kept(max_kept), None).unwrap();
        assert_eq!(r.outcome, LayeredOutcome::Unsolvable);
        assert_eq!(r.positions, 61_643);
    }
    let late = late_position();
    let with = search(&late, 0, limits, None, 100, kept(u64::MAX), None).unwrap();
    assert_eq!(with.outcome, LayeredOutcome::Won);
    assert!(with.won_at.is_none());
    assert_line(&late, 0, &with.chain);
    // Without its line, the proof's win is found again by a search that keeps to the positions that
    // may lead to it: fewer than the proof's, and a line.
    let without = search(&late, 0, limits, None, 100, kept(1 << 12), None).unwrap();
    assert_eq!(without.outcome, LayeredOutcome::Won);
    assert!(without.won_at.is_none());
    assert_line(&late, 0, &without.chain);
    let line = without.positions - with.positions;
    assert!(
        line > 0 && line < with.positions,
        "{line} of {}",
        with.positions
    );
}

/// Every position of a line lies in the cone of every later one (the search for a line drops none of
/// them), and the cone of a position past the start leaves out some children of the start.
#[test]
fn a_line_lies_in_the_cones_of_its_later_positions() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let mut lines = 0;
    for deal in 1..=4 {
        // The deal with its cards below 7 home: most win within a few hundred thousand positions.
        let mut layout = Layout::deal(deal).unwrap();
        for col in layout.columns.iter_mut() {
            col.retain(|&c| crate::card::rank(c) >= 6);
        }
        layout.foundations = [6; 4];
        let line = search(&layout, 1, limits, None, 5000, kept(u64::MAX), None)
            .unwrap()
            .chain;
        if line.len() < 8 {
            continue;
        }
        lines += 1;
        for (i, later) in line.iter().enumerate() {
            let cone = super::cone::Cone::of(later);
            assert!(
                line[..=i].iter().all(|k| cone.holds(k)),
                "deal {deal}: position {i}"
            );
        }
        assert_line(&layout, 1, &line);
        let rules = Rules::new(&layout, 1);
        let mut kids = Vec::new();
        rules.children(&rules.decode(&line[0]), &mut kids);
        let cone = super::cone::Cone::of(&line[line.len() / 2]);
        assert!(kids.iter().any(|k| !cone.holds(k)), "deal {deal}");
    }
    assert!(lines >= 2, "{lines} lines");
}

/// `chain` is a line of play from the start of `layout` with `ncells` cells: each key a child of the one
/// before, the last won or sorted.
fn assert_line(layout: &Layout, ncells: usize, chain: &[Key]) {
    let rules = Rules::new(layout, ncells);
    let (mut p0, _) = Position::from_layout(layout, ncells).unwrap();
    p0.settle(None);
    assert_eq!(chain.first(), Some(p0.key()));
    let mut kids = Vec::new();
    for w in chain.windows(2) {
        rules.children(&rules.decode(&w[0]), &mut kids);
        assert!(kids.contains(&w[1]), "a step that is no move");
    }
    let last = chain.last().unwrap();
    assert!(
        *last == [0; 3] || rules.is_sorted(last),
        "a line that does not win"
    );
}

/// A search for the line of a win that runs out of its budget keeps its files with the win's
/// position, and goes on from them with a larger budget: the proof is not made again, and the line
/// and the count are those of the search made at once.
#[test]
fn a_search_for_a_line_goes_on_from_its_files() {
    let (late, bounds, at_once) = late_line();
    let proof = search(&late, 0, limits(2_000_000), None, 100, kept(u64::MAX), None).unwrap();
    let dir = std::env::temp_dir().join(format!("fca-line-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let short = limits(proof.positions + 10);
    let r = search(&late, 0, short, None, 100, bounds, Some(&dir)).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Positions));
    assert!(super::has_checkpoint(&dir));
    // With a larger budget, the search goes straight to the line from its files.
    let r = search(&late, 0, limits(2_000_000), None, 100, bounds, Some(&dir)).unwrap();
    assert_eq!(r.outcome, LayeredOutcome::Won);
    assert_eq!(r.positions, at_once.positions);
    assert_eq!(r.chain, at_once.chain);
    assert!(!dir.exists(), "the files of a decided search stay");
}

/// A resumable search killed at the start of a layer goes on from that layer's checkpoint when run
/// again with the same directory, and ends as the search run at once does: the same count, and a
/// line to the win from the files kept before the kill. A checkpoint of another search, or a torn
/// one, is not resumed.
#[test]
fn a_killed_search_goes_on_from_its_checkpoint() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let dir = std::env::temp_dir().join(format!("fcanalyze-test-resume-{}", std::process::id()));
    let late = late_position();
    for (layout, k, flush) in [(Layout::deal(11982).unwrap(), 4, 500), (late, 0, 100)] {
        let whole = search(&layout, k, limits, None, flush, kept(u64::MAX), None).unwrap();
        for (n, at_once) in [
            (1, true),
            (2, true),
            (5, true),
            (1, false),
            (3, false),
            (6, false),
        ] {
            KILL_AFTER.set(Some(n));
            KILL_AT_ONCE.set(at_once);
            let killed = search(&layout, k, limits, None, flush, kept(u64::MAX), Some(&dir));
            KILL_AFTER.set(None);
            KILL_AT_ONCE.set(true);
            assert!(killed.is_err(), "killed at checkpoint {n}");
            assert!(has_checkpoint(&dir));
            let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
            let c = Checkpoint::parse(&text).unwrap();
            assert_eq!(Checkpoint::parse(&c.to_text()), Some(c));
            // Resumed with one thread or two: the checkpoint does not depend on them.
            let threads = 1 + n % 2;
            let b = Bounds {
                threads,
                ..kept(u64::MAX)
            };
            let r = search(&layout, k, limits, None, flush, b, Some(&dir)).unwrap();
            assert_eq!(r.outcome, whole.outcome, "killed at checkpoint {n}");
            if threads == 1 || whole.outcome == LayeredOutcome::Unsolvable {
                // (A win's count depends on the groups the other thread searched by then.)
                assert_eq!(r.positions, whole.positions, "killed at checkpoint {n}");
            }
            if whole.outcome == LayeredOutcome::Won {
                assert!(!r.chain.is_empty());
                assert_eq!(r.chain.first(), whole.chain.first());
            }
            assert!(!dir.exists(), "the files go when the search ends");
        }
    }
    // Killed again after a resumption: the lines still reach the start.
    let late = late_position();
    let whole = search(&late, 0, limits, None, 100, kept(u64::MAX), None).unwrap();
    for n in [2, 3] {
        KILL_AFTER.set(Some(n));
        assert!(search(&late, 0, limits, None, 100, kept(u64::MAX), Some(&dir)).is_err());
    }
    KILL_AFTER.set(None);
    let r = search(&late, 0, limits, None, 100, kept(u64::MAX), Some(&dir)).unwrap();
    assert_eq!((r.outcome, r.positions), (whole.outcome, whole.positions));
    assert_eq!(r.chain.first(), whole.chain.first());
    assert_eq!(r.chain.len(), whole.chain.len());
    // A checkpoint without its files (brought to another machine alone), or with one cut short,
    // starts afresh, to the same end.
    let deal = Layout::deal(11982).unwrap();
    for cut in [false, true] {
        KILL_AFTER.set(Some(3));
        assert!(search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).is_err());
        KILL_AFTER.set(None);
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            if e.path() != dir.join(CHECKPOINT_FILE) {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(e.path())
                    .unwrap();
                if cut {
                    f.set_len(f.metadata().unwrap().len() / 2).unwrap();
                } else {
                    std::fs::remove_file(e.path()).unwrap();
                }
            }
        }
        assert!(has_checkpoint(&dir));
        let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
        assert_eq!(
            (r.outcome, r.positions),
            (LayeredOutcome::Unsolvable, 61_643)
        );
    }
    // Another search's checkpoint, or a torn one, starts afresh.
    let deal = Layout::deal(11982).unwrap();
    KILL_AFTER.set(Some(3));
    assert!(search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).is_err());
    KILL_AFTER.set(None);
    assert!(has_checkpoint(&dir));
    let other = search(&deal, 3, limits, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
    let fresh = search(&deal, 3, limits, None, 500, kept(u64::MAX), None).unwrap();
    assert_eq!(other.positions, fresh.positions);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(CHECKPOINT_FILE),
        "fcanalyze-layered-checkpoint/1\nidentity x\nlay",
    )
    .unwrap();
    assert!(!has_checkpoint(&dir));
    let r = search(&deal, 4, limits, None, 500, kept(u64::MAX), Some(&dir)).unwrap();
    assert_eq!(r.positions, 61_643);
    assert!(!dir.exists());
}

/// A resumable search killed within a layer, after a checkpoint saved at the end of a level of a
/// group searched by levels or after a finished group, goes on from there: killed again after each
/// such checkpoint it still ends (each run gets further), with the count of the search run at
/// once, whatever the threads it is resumed with. The checkpoints list the groups, and their files.
#[test]
fn a_search_killed_within_a_layer_goes_on_from_its_last_level() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let dir = std::env::temp_dir().join(format!("fcanalyze-test-within-{}", std::process::id()));
    let levels = Bounds {
        max_kept: u64::MAX,
        max_stack_bytes: usize::MAX,
        max_set_len: 300,
        trades: true,
        level_chunk: 1000,
        min_free_disk: 0,
        threads: 1,
        save_every_ms: 30,
        cone: None,
    };
    let late = late_position();
    let (mut in_parts, mut with_trades) = (false, false);
    for (layout, k) in [(Layout::deal(11982).unwrap(), 4), (late, 0)] {
        let whole = search(&layout, k, limits, None, 5000, levels, None).unwrap();
        for every in [1, 3] {
            let (mut runs, mut listed) = (0, [false; 2]);
            let (r, threads) = loop {
                KILL_WITHIN.set(Some(every));
                let threads = 1 + runs % 2;
                let b = Bounds { threads, ..levels };
                let r = search(&layout, k, limits, None, 5000, b, Some(&dir));
                KILL_WITHIN.set(None);
                runs += 1;
                assert!(runs < 2000, "no progress after {runs} runs");
                match r {
                    Ok(r) => break (r, threads),
                    Err(_) => {
                        let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
                        let c = Checkpoint::parse(&text).unwrap();
                        assert_eq!(Checkpoint::parse(&c.to_text()), Some(c.clone()));
                        listed[0] |= !c.finished.is_empty();
                        listed[1] |= !c.by_levels.is_empty();
                        // A level in parts, merged by two threads.
                        in_parts |= c.by_levels.iter().any(|g| g.cur.len() > 1);
                        with_trades |= c.by_levels.iter().any(|g| g.trades.is_some());
                        for g in &c.by_levels {
                            for (name, len) in g.files() {
                                let index = packed::Index::read(&dir.join(name)).unwrap();
                                assert_eq!(index.len as u64, *len);
                            }
                        }
                    }
                }
            };
            assert!(runs > 3, "{runs} runs");
            assert_eq!(listed, [true, true]);
            assert_eq!(r.outcome, whole.outcome);
            if threads == 1 || whole.outcome == LayeredOutcome::Unsolvable {
                // (A win's count depends on the groups the other thread searched by then.)
                assert_eq!(r.positions, whole.positions);
            }
            if whole.outcome == LayeredOutcome::Won {
                assert!(!r.chain.is_empty());
            } else {
                assert_eq!(r.positions, 61_643);
            }
            assert!(!dir.exists(), "the files go when the search ends");
        }
    }
    assert!(in_parts, "no checkpoint listed a level in parts");
    assert!(
        with_trades,
        "no checkpoint listed a group searched by orbits"
    );
}

/// Once the lines are forgotten (the files kept for them would pass their budget), the seeds are
/// written lean, keys alone: the same proof on less disk, resumable from checkpoints that list runs
/// of both kinds in one file.
#[test]
fn seeds_are_written_lean_once_the_lines_are_forgotten() {
    let limits = Limits {
        max_positions: 2_000_000,
        max_millis: None,
    };
    let deal = Layout::deal(11982).unwrap();
    let (full, lean) = with_and_without_kept_files(limits);
    assert_eq!(
        (lean.outcome, lean.positions),
        (LayeredOutcome::Unsolvable, 61_643)
    );
    // Without the kept files, the later layers' seeds alone: at most LEAN / RECORD of the full size
    // (and the full search keeps every finished layer besides).
    assert!(
        lean.peak_disk * RECORD as u64 <= full.peak_disk * LEAN as u64,
        "{} {}",
        lean.peak_disk,
        full.peak_disk
    );
    let dir = std::env::temp_dir().join(format!("fcanalyze-test-lean-{}", std::process::id()));
    let mut kinds = [false; 3];
    for budget in [0, full.peak_disk / 4] {
        for n in 1..12 {
            KILL_AFTER.set(Some(n));
            let r = search(&deal, 4, limits, None, 500, kept(budget), Some(&dir));
            KILL_AFTER.set(None);
            if r.is_ok() {
                break;
            }
            let text = std::fs::read_to_string(dir.join(CHECKPOINT_FILE)).unwrap();
            let c = Checkpoint::parse(&text).unwrap();
            assert_eq!(Checkpoint::parse(&c.to_text()), Some(c.clone()));
            for (_, _, runs) in &c.layers {
                let lean = runs.iter().filter(|r| r.1).count();
                kinds[0] |= lean > 0 && lean == runs.len();
                kinds[1] |= lean == 0;
                kinds[2] |= lean > 0 && lean < runs.len();
            }
            let r = search(&deal, 4, limits, None, 500, kept(budget), Some(&dir)).unwrap();
            assert_eq!(
                (r.outcome, r.positions),
                (LayeredOutcome::Unsolvable, 61_643)
            );
            assert!(!dir.exists());
        }
    }
    assert_eq!(kinds, [true, true, true]);
}

/// The split of a merge between threads: `n - 1` increasing codes that share the samples' weight
/// about equally, whatever the samples (none, fewer than the threads, all equal).
#[test]
fn merges_split_into_ranges_of_about_equal_sizes() {
    let samples: Vec<(u128, u64)> = (0..1000u128).rev().map(|c| (c * 7, 3)).collect();
    for n in 1..=5usize {
        let points = split_points(samples.clone(), n);
        assert_eq!(points.len(), n - 1);
        assert!(points.windows(2).all(|w| w[0] <= w[1]));
        for (j, &p) in points.iter().enumerate() {
            let below = samples.iter().filter(|s| s.0 < p).count();
            let goal = 1000 * (j + 1) / n;
            assert!(
                below.abs_diff(goal) <= 1,
                "n={n} j={j}: {below} below, {goal} wanted"
            );
        }
    }
    assert_eq!(split_points(vec![], 3).len(), 2);
    assert_eq!(split_points(vec![(5, 1)], 4).len(), 3);
    assert_eq!(split_points(vec![(5, 10); 10], 2), vec![5]);
}

/// A checkpoint that names one file per level (written before levels had parts) reads as levels of
/// one part; levels of several parts are saved and read back.
#[test]
fn checkpoints_list_the_parts_of_levels() {
    let old = "fcanalyze-layered-checkpoint/4\nidentity x\nlayer 3\n\
               levels 2 1,2,3,4,5,6 10 level-0-000007.codes 4 - 0\n\
               levels 5 1,2,3,4,5,7 20 level-1-000009.codes 6 level-1-000008.codes 3\nend\n";
    let c = Checkpoint::parse(old).unwrap();
    assert_eq!(c.by_levels[0].cur, vec![("level-0-000007.codes".into(), 4)]);
    assert!(c.by_levels[0].prev.is_empty());
    assert_eq!(
        c.by_levels[1].prev,
        vec![("level-1-000008.codes".into(), 3)]
    );
    assert_eq!(Checkpoint::parse(&c.to_text()), Some(c.clone()));
    let mut parts = c;
    parts.by_levels[1]
        .cur
        .push(("level-1-000010.codes".into(), 5));
    let text = parts.to_text();
    assert!(text.contains("level-1-000009.codes+level-1-000010.codes 6+5"));
    assert_eq!(Checkpoint::parse(&text), Some(parts));
    for torn in ["a.codes 4", "level-0-1.codes 4+5", "- 3"] {
        let t = old.replace("level-0-000007.codes 4", torn);
        assert_eq!(Checkpoint::parse(&t), None, "{torn}");
    }
}

/// Deal 26063 with 1 cell, its groups searched by levels past 2^16 positions within 70 MB, with one
/// thread and with two (the second helping the first's levels): the lean prover's count.
#[test]
#[ignore = "minutes of CPU: run with --ignored"]
fn deal_26063_by_levels_with_one_thread_or_two() {
    for threads in [1, 2] {
        let config = LayeredConfig {
            max_memory: Some(70 << 20),
            threads,
            max_set_len: Some(1 << 16),
            ..LayeredConfig::default()
        };
        let limits = Limits {
            max_positions: u64::MAX,
            max_millis: None,
        };
        let r = prove_layered(&Layout::deal(26063).unwrap(), 1, limits, &config).unwrap();
        assert_eq!(
            (r.outcome, r.positions),
            (LayeredOutcome::Unsolvable, 37_426_252),
            "{threads} threads"
        );
    }
}

/// A position budget counts the positions of every thread's groups: a search of two threads stops near
/// its budget, not a group of the other thread past it, and counts what both searched. Before, each
/// thread weighed only its own group in progress: deal 26063 with 1 cell at a budget of a million
/// expanded 1.55-1.58 million positions with groups in sets, 1.71-1.77 million by levels (now 0.84-0.89
/// and 1.13-1.22), and in pass 4 of 1-1,000,000 deal 295997 with 2 cells ended at 7.6 billion
/// positions of a budget of 5.
#[test]
fn a_position_budget_counts_every_threads_positions() {
    let deal = Layout::deal(26063).unwrap();
    let budget = 1_000_000;
    let limits = Limits {
        max_positions: budget,
        max_millis: None,
    };
    let sets = Bounds {
        threads: 2,
        ..kept(u64::MAX)
    };
    let levels = Bounds {
        max_set_len: 1 << 16,
        ..sets
    };
    for b in [sets, levels] {
        let r = search(&deal, 1, limits, None, 1 << 16, b, None).unwrap();
        let expanded = EXPANDED.get();
        assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Positions));
        assert!(r.positions >= budget, "{}", r.positions);
        assert!(expanded < budget * 13 / 10, "{expanded} expanded");
    }
}

/// A position budget stops a search by levels in the merge that reaches it, not at the expansion of
/// the level merged: without orbits, past the budget by at most what the merge writes between two
/// asks ([`super::level::OUT_EVERY`] codes; before, deal 26063 with 1 cell ended 33,000 and 96,000
/// positions past budgets of 3 and 8 million), and by orbits (each new code weighed at the level's mean
/// orbit, counted as one) not far from it either way.
#[test]
fn a_position_budget_stops_the_merge_that_reaches_it() {
    let deal = Layout::deal(26063).unwrap();
    for trades in [false, true] {
        for budget in [3_000_000u64, 8_000_000] {
            let limits = Limits {
                max_positions: budget,
                max_millis: None,
            };
            let b = Bounds {
                max_set_len: 1 << 12,
                trades,
                ..kept(u64::MAX)
            };
            let r = search(&deal, 1, limits, None, 1 << 16, b, None).unwrap();
            assert_eq!(r.outcome, LayeredOutcome::Undecided(Budget::Positions));
            let within = match trades {
                false => budget..budget + super::level::OUT_EVERY,
                true => budget - budget / 100..budget + budget / 100,
            };
            assert!(
                within.contains(&r.positions),
                "{trades} {budget}: {}",
                r.positions
            );
        }
    }
}

/// A search for a line whose way back to its win outgrows the memory searches the groups on its way
/// on disk: the line (another as short within each group) and the count of the search made at once.
#[test]
fn a_way_back_that_outgrows_the_memory_goes_on_disk() {
    let (late, bounds, at_once) = late_line();
    super::WAY_BACK_ROOM.set(Some(1));
    let on_disk = search(&late, 0, limits(2_000_000), None, 100, bounds, None);
    super::WAY_BACK_ROOM.set(None);
    let on_disk = on_disk.unwrap();
    assert_eq!(on_disk.outcome, LayeredOutcome::Won);
    assert_eq!(on_disk.positions, at_once.positions);
    assert_line(&late, 0, &on_disk.chain);
}

/// A search for a line whose way back to its win outgrows the memory and the disk keeps its files and
/// the win; a search of the same position with other memory (another identity), and a budget it could
/// not search within, finds the way back from those files: the line and the count of the search made
/// at once, the files removed.
#[test]
fn a_way_back_that_outgrew_the_memory_is_tried_again_from_its_files() {
    let (late, bounds, at_once) = late_line();
    assert!(!at_once.chain.is_empty());
    let dir = std::env::temp_dir().join(format!("fca-way-back-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    super::WAY_BACK_ROOM.set(Some(1));
    super::WAY_BACK_MIN_FREE.set(Some(u64::MAX / 4));
    let lost = search(&late, 0, limits(2_000_000), None, 100, bounds, Some(&dir));
    super::WAY_BACK_ROOM.set(None);
    super::WAY_BACK_MIN_FREE.set(None);
    let lost = lost.unwrap();
    assert_eq!(lost.outcome, LayeredOutcome::Won);
    assert!(lost.chain.is_empty() && lost.won_at.is_some());
    assert_eq!(lost.positions, at_once.positions);
    assert!(
        super::has_checkpoint(&dir),
        "the files of a win without a line stay"
    );
    let again = search(&late, 0, limits(1), Some(1 << 30), 100, bounds, Some(&dir)).unwrap();
    assert_eq!(again.outcome, LayeredOutcome::Won);
    assert_eq!(
        (again.positions, &again.chain),
        (at_once.positions, &at_once.chain)
    );
    assert_line(&late, 0, &again.chain);
    assert!(!dir.exists(), "the files of a win with its line stay");
}

/// A seed of deal 5 with 2 cells some moves into the deal, with its rules and each position's distance
/// from it breadth first within its layer (thousands of positions): the largest of those of a sample
/// of the positions reached breadth first from the start.
fn a_seed_and_its_layer() -> (Rules, Key, std::collections::HashMap<Key, usize>) {
    let layout = Layout::deal(5).unwrap();
    let rules = Rules::new(&layout, 2);
    let (mut p0, _) = Position::from_layout(&layout, 2).unwrap();
    p0.settle(None);
    let mut kids = Vec::new();
    let mut within = |seed: Key| {
        let layer = progress(&seed);
        let mut dist: std::collections::HashMap<Key, usize> = [(seed, 0)].into();
        let mut queue = std::collections::VecDeque::from([seed]);
        while let Some(k) = queue.pop_front() {
            rules.children(&rules.decode(&k), &mut kids);
            for c in &kids {
                if progress(c) == layer && !dist.contains_key(c) {
                    dist.insert(*c, dist[&k] + 1);
                    queue.push_back(*c);
                }
            }
        }
        dist
    };
    let mut reached = vec![*p0.key()];
    let mut seen: std::collections::HashSet<Key> = reached.iter().copied().collect();
    let mut kids = Vec::new();
    let mut i = 0;
    while i < reached.len() && reached.len() < 200_000 {
        rules.children(&rules.decode(&reached[i]), &mut kids);
        reached.extend(kids.iter().filter(|k| seen.insert(**k)));
        i += 1;
    }
    let (seed, dist) = reached
        .iter()
        .step_by(997)
        .map(|&k| (k, within(k)))
        .max_by_key(|(k, d)| (d.len(), *k))
        .unwrap();
    assert!(dist.len() > 5_000, "{} positions", dist.len());
    (rules, seed, dist)
}

/// Whether `path` goes from `seed` to `target` in `d` moves, each step a child of the one before.
fn a_path_of(rules: &Rules, path: &[Key], (seed, target, d): (&Key, &Key, usize)) -> bool {
    let mut kids = Vec::new();
    path.len() == d + 1
        && (&path[0], &path[d]) == (seed, target)
        && path.windows(2).all(|w| {
            rules.children(&rules.decode(&w[0]), &mut kids);
            kids.contains(&w[1])
        })
}

/// The path within a group to a position of it ([`super::chain::group_path`]) is a shortest one, each
/// step a child of the one before, from the group's seeds: over positions reached breadth first
/// within one layer from a seed ([`a_seed_and_its_layer`]), as far as a plain breadth-first search
/// finds them; and within a room too small for the positions it reaches first, none.
#[test]
fn group_paths_are_shortest_and_fit_their_room() {
    use super::chain::group_path;
    let (rules, seed, dist) = a_seed_and_its_layer();
    let group = || vec![crate::key::pack(&seed)];
    let mut far: Vec<(&Key, &usize)> = dist.iter().collect();
    far.sort();
    for (target, &d) in far.iter().step_by(far.len() / 40) {
        let path = group_path(&rules, group(), target, None).expect("a path");
        assert!(a_path_of(&rules, &path, (&seed, target, d)), "{target:?}");
    }
    // The farthest position needs the whole layer; a room of 64 KB holds some 3,000 positions, one of
    // 400 KB some 15,000 (its last table as large as the room holds beside the one before: doubling,
    // 12,000).
    let (farthest, _) = dist.iter().max_by_key(|(k, &d)| (d, **k)).unwrap();
    assert!(dist.len() < 15_000);
    assert!(group_path(&rules, group(), farthest, Some(1 << 16)).is_none());
    assert!(group_path(&rules, group(), farthest, Some(400 << 10)).is_some());
    assert!(group_path(&rules, group(), farthest, Some(1 << 24)).is_some());
}

/// The path within a group found on disk ([`super::chain::group_path_on_disk`]) is a shortest one too,
/// its levels merged from many runs (chunks of 256 codes, the seed given three times over), its files
/// removed after; a disk that must keep more free than it has gives none.
#[test]
fn group_paths_on_disk_are_shortest() {
    use super::chain::group_path_on_disk;
    let (rules, seed, dist) = a_seed_and_its_layer();
    let dir = std::env::temp_dir().join(format!("fca-on-disk-{}", std::process::id()));
    let seeds = |f: &mut dyn FnMut(&Key)| {
        for _ in 0..3 {
            f(&seed);
        }
        Ok(())
    };
    let mut far: Vec<(&Key, &usize)> = dist.iter().collect();
    far.sort();
    for (target, &d) in far.iter().step_by(far.len() / 40) {
        let path = group_path_on_disk(&rules, seeds, target, (&dir, 0), 256).unwrap();
        let path = path.expect("a path");
        assert!(a_path_of(&rules, &path, (&seed, target, d)), "{target:?}");
        assert!(!dir.exists(), "its files stay");
    }
    let (farthest, &d) = dist.iter().max_by_key(|(k, &d)| (d, **k)).unwrap();
    let path = group_path_on_disk(&rules, seeds, farthest, (&dir, 0), 256).unwrap();
    assert!(a_path_of(
        &rules,
        &path.expect("a path"),
        (&seed, farthest, d)
    ));
    let full = group_path_on_disk(&rules, seeds, farthest, (&dir, u64::MAX / 4), 256).unwrap();
    assert!(full.is_none());
    assert!(!dir.exists());
}
