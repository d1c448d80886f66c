//! The checkpoint of a resumable layered search ([`Checkpoint`]): what it saves at the start of a layer
//! and within one, as text, and how the files are brought back to what it lists.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use crate::autoplay::Autoplay;
use crate::error::Result;
use crate::key::{pack, Key};
use crate::layer::LAYERS;

use super::packed::Index;
use super::spill::{io_error, level_number, SpillDir};
use super::trades::Trades;
use super::Bounds;

/// The first line of a checkpoint: its format.
/// Format 2: level files hold tagged codes ([`super::code::tag`]). Format 3: seed records carry their
/// trades ([`super::code::RECORD`] 52 bytes, 24 lean). Format 4: level files hold their codes as
/// differences ([`super::packed`]). A checkpoint of an older format is not resumed.
pub(super) const CHECKPOINT_FORMAT: &str = "fcanalyze-layered-checkpoint/4";

/// Where each sorted run of a layer's file starts, and whether its records are lean (lean: keys alone).
pub(super) type Runs = Vec<(u64, bool)>;

/// A group of the layer being searched, finished since the layer's start: its number in the merge's
/// order (groups of one hash share it), its signature, and its positions.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Finished {
    pub(super) group: u64,
    pub(super) sig: [u64; 6],
    pub(super) len: u64,
}

/// A group searched by levels ([`search_by_levels`]) as it stood at the end of a level: its number and
/// signature, the positions of its levels before `cur`, and the parts (file names in the spill directory,
/// and codes) of the level to expand next and of the one before it. Saved as the names and the codes of
/// the parts each joined by `+` (`-` and 0 for no part): a checkpoint of one file per level, from before
/// levels had parts, reads the same.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct LevelState {
    pub(super) group: u64,
    pub(super) sig: [u64; 6],
    pub(super) total: u64,
    pub(super) cur: Vec<(String, u64)>,
    pub(super) prev: Vec<(String, u64)>,
    /// Whether the search expands its follower's positions too (`layered::twin`).
    pub(super) twin: bool,
    /// The trades of a search by orbits (`layered::trades`).
    pub(super) trades: Option<Vec<(u8, u8)>>,
}

impl LevelState {
    pub(super) fn files(&self) -> impl Iterator<Item = &(String, u64)> {
        self.cur.iter().chain(&self.prev)
    }
}

/// The parts of a level as a checkpoint saves them: their names, then their codes, each joined by `+`.
fn parts_text(parts: &[(String, u64)]) -> String {
    if parts.is_empty() {
        return "- 0".into();
    }
    let names: Vec<&str> = parts.iter().map(|p| p.0.as_str()).collect();
    let lens: Vec<String> = parts.iter().map(|p| p.1.to_string()).collect();
    format!("{} {}", names.join("+"), lens.join("+"))
}

/// The parts of [`parts_text`], each a level file's name (`None` unless whole).
fn parse_parts(names: &str, lens: &str) -> Option<Vec<(String, u64)>> {
    if names == "-" {
        return (lens == "0").then(Vec::new);
    }
    let names: Vec<&str> = names.split('+').collect();
    let lens = lens
        .split('+')
        .map(|x| x.parse::<u64>().ok())
        .collect::<Option<Vec<u64>>>()?;
    if names.len() != lens.len() {
        return None;
    }
    names
        .into_iter()
        .zip(lens)
        .map(|(name, len)| level_number(name).map(|_| (name.to_string(), len)))
        .collect()
}

pub(super) fn sig_text(sig: &[u64; 6]) -> String {
    let w: Vec<String> = sig.iter().map(|x| format!("{x:x}")).collect();
    w.join(",")
}

pub(super) fn parse_sig(text: &str) -> Option<[u64; 6]> {
    let w = text
        .split(',')
        .map(|x| u64::from_str_radix(x, 16).ok())
        .collect::<Option<Vec<u64>>>()?;
    w.try_into().ok()
}

/// What a resumable layered search saves when it starts a layer (the seeds of the layers to come are on
/// disk then, every buffer written): enough to go on from that layer after the process is killed. Within
/// a layer it saves it again ([`Seeds::save_within`]) at the end of each level of a group searched by
/// levels, and when a large group is finished: with the groups finished since the layer's start and the
/// levels reached, so that a killed search loses at most a level of a giant group.
/// Saved as text, `name value...` a line, written to a temporary file and renamed over the last one.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Checkpoint {
    /// What the search is: the start position, the cells, and the bounds that shape the files.
    pub(super) identity: String,
    pub(super) layer: usize,
    pub(super) done: u64,
    pub(super) expanded: u64,
    pub(super) elapsed_ms: f64,
    pub(super) peak_positions: u64,
    pub(super) peak_bytes: usize,
    pub(super) peak_parts: [usize; 5],
    pub(super) peak_disk: u64,
    pub(super) keep: bool,
    pub(super) kept: u64,
    pub(super) transient: u64,
    pub(super) disk: u64,
    /// Per layer to come with seeds: its file's bytes and the offsets of its sorted runs (and whether
    /// each is lean).
    pub(super) layers: Vec<(usize, u64, Runs)>,
    /// The finished layers whose seeds are kept for lines (when `keep`).
    pub(super) kept_layers: Vec<usize>,
    /// Within the layer: the groups finished, and those searched by levels (`expanded` does not count
    /// their positions).
    pub(super) finished: Vec<Finished>,
    pub(super) by_levels: Vec<LevelState>,
}

/// What a checkpoint must match to be resumed: the settled start, the cells, the rules of automatic
/// moves (named only when not the default, so that checkpoints written before them still resume) and
/// the bounds that shape the files.
pub(super) fn identity(
    root: &Key,
    ncells: usize,
    autoplay: Autoplay,
    max_memory: Option<usize>,
    flush: usize,
    b: &Bounds,
) -> String {
    let words: Vec<String> = pack(root).iter().map(|w| format!("{w:08x}")).collect();
    let rules = match autoplay {
        Autoplay::Safe => String::new(),
        other => format!(" autoplay={other}"),
    };
    // A search for a line (docs/design.md) is another search than the proof, toward its target.
    let cone = b
        .cone
        .map_or(String::new(), |c| format!(" cone={}", c.text()));
    format!(
        "{} cells={ncells}{rules} memory={max_memory:?} flush={flush} kept={} stack={}{cone}",
        words.join(""),
        b.max_kept,
        b.max_stack_bytes
    )
}

impl Checkpoint {
    pub(super) fn to_text(&self) -> String {
        let mut t = format!("{CHECKPOINT_FORMAT}\nidentity {}\n", self.identity);
        let parts: Vec<String> = self.peak_parts.iter().map(|p| p.to_string()).collect();
        t += &format!(
            "layer {}\ndone {}\nexpanded {}\nelapsed_ms {}\npeak {} {} {} {}\n",
            self.layer,
            self.done,
            self.expanded,
            self.elapsed_ms,
            self.peak_positions,
            self.peak_bytes,
            self.peak_disk,
            parts.join(" ")
        );
        t += &format!(
            "files {} {} {} {}\n",
            self.keep as u8, self.kept, self.transient, self.disk
        );
        for (l, written, runs) in &self.layers {
            let runs: Vec<String> = runs
                .iter()
                .map(|&(r, lean)| format!("{r}{}", if lean { "k" } else { "" }))
                .collect();
            t += &format!("seeds {l} {written} {}\n", runs.join(" "));
        }
        for l in &self.kept_layers {
            t += &format!("kept {l}\n");
        }
        for f in &self.finished {
            t += &format!("finished {} {} {}\n", f.group, sig_text(&f.sig), f.len);
        }
        for g in &self.by_levels {
            t += &format!(
                "levels {} {} {} {} {}{}{}\n",
                g.group,
                sig_text(&g.sig),
                g.total,
                parts_text(&g.cur),
                parts_text(&g.prev),
                if g.twin { " twin" } else { "" },
                g.trades
                    .as_ref()
                    .map_or(String::new(), |t| format!(" trades {}", Trades::text(t)))
            );
        }
        t + "end\n"
    }

    /// The checkpoint in `text`; `None` unless it is whole (a torn or foreign file is not resumed).
    pub(super) fn parse(text: &str) -> Option<Checkpoint> {
        let mut lines = text.lines();
        if lines.next()? != CHECKPOINT_FORMAT {
            return None;
        }
        let identity = lines.next()?.strip_prefix("identity ")?.to_string();
        let mut c = Checkpoint {
            identity,
            layer: 0,
            done: 0,
            expanded: 0,
            elapsed_ms: 0.0,
            peak_positions: 0,
            peak_bytes: 0,
            peak_parts: [0; 5],
            peak_disk: 0,
            keep: false,
            kept: 0,
            transient: 0,
            disk: 0,
            layers: vec![],
            kept_layers: vec![],
            finished: vec![],
            by_levels: vec![],
        };
        let num = |x: Option<&str>| x?.parse::<u64>().ok();
        for line in lines {
            let mut w = line.split(' ');
            match w.next()? {
                "layer" => c.layer = num(w.next())? as usize,
                "done" => c.done = num(w.next())?,
                "expanded" => c.expanded = num(w.next())?,
                "elapsed_ms" => c.elapsed_ms = w.next()?.parse().ok()?,
                "peak" => {
                    c.peak_positions = num(w.next())?;
                    c.peak_bytes = num(w.next())? as usize;
                    c.peak_disk = num(w.next())?;
                    for p in &mut c.peak_parts {
                        *p = num(w.next())? as usize;
                    }
                }
                "files" => {
                    c.keep = num(w.next())? == 1;
                    c.kept = num(w.next())?;
                    c.transient = num(w.next())?;
                    c.disk = num(w.next())?;
                }
                "seeds" => {
                    let l = num(w.next())? as usize;
                    let written = num(w.next())?;
                    // A lean run's offset ends in `k` (its records are keys alone).
                    let runs = w
                        .map(|r| {
                            let lean = r.ends_with('k');
                            Some((r.trim_end_matches('k').parse().ok()?, lean))
                        })
                        .collect::<Option<Runs>>()?;
                    if l >= LAYERS || runs.is_empty() || runs.iter().any(|&(r, _)| r >= written) {
                        return None;
                    }
                    c.layers.push((l, written, runs));
                }
                "kept" => {
                    let l = num(w.next())? as usize;
                    if l >= c.layer {
                        return None;
                    }
                    c.kept_layers.push(l);
                }
                "finished" => c.finished.push(Finished {
                    group: num(w.next())?,
                    sig: parse_sig(w.next()?)?,
                    len: num(w.next())?,
                }),
                "levels" => {
                    let group = num(w.next())?;
                    let sig = parse_sig(w.next()?)?;
                    let total = num(w.next())?;
                    let cur = parse_parts(w.next()?, w.next()?)?;
                    let prev = parse_parts(w.next()?, w.next()?)?;
                    let (mut twin, mut trades) = (false, None);
                    while let Some(word) = w.next() {
                        match word {
                            "twin" if !twin => twin = true,
                            "trades" if trades.is_none() => {
                                trades = Some(Trades::parse(w.next()?)?)
                            }
                            _ => return None,
                        }
                    }
                    if cur.is_empty() {
                        return None;
                    }
                    c.by_levels.push(LevelState {
                        group,
                        sig,
                        total,
                        cur,
                        prev,
                        twin,
                        trades,
                    });
                }
                "end" => return (c.layer < LAYERS).then_some(c),
                _ => return None,
            }
        }
        None
    }

    /// Save to `path` atomically.
    pub(super) fn save(&self, path: &Path) -> Result<()> {
        let tmp = path.with_extension("tmp");
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(self.to_text().as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)?;
            if let Some(dir) = path.parent() {
                File::open(dir)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(|e| io_error(path, e))
    }

    /// The checkpoint saved in `dir` for the search `identity`, its files brought back to what it lists:
    /// the layer it was saved at gets its file back (the merge renames it), later layers' files are cut
    /// back to their listed bytes, files it does not list are removed. Lines are forgotten if a kept
    /// layer is gone (the search went past the disk budget for lines after the checkpoint). `None` (and
    /// the directory emptied) when there is none, or it is for another search or unreadable.
    pub(super) fn load(dir: &SpillDir, identity: &str) -> Result<Option<Checkpoint>> {
        let mut found = std::fs::read_to_string(dir.state())
            .ok()
            .and_then(|t| Checkpoint::parse(&t))
            .filter(|c| c.identity == identity);
        if let Some(c) = found.as_mut() {
            let current = dir.file(c.layer);
            let listed = c.layers.iter().any(|(l, _, _)| *l == c.layer);
            if listed && !current.exists() {
                for renamed in [dir.kept(c.layer), dir.kept(LAYERS)] {
                    if renamed.exists() {
                        std::fs::rename(&renamed, &current).map_err(|e| io_error(&current, e))?;
                        break;
                    }
                }
            }
            let short = |l: usize, written: u64| {
                std::fs::metadata(dir.file(l)).map_or(true, |m| m.len() < written)
            };
            if c.layers.iter().any(|&(l, written, _)| short(l, written)) {
                // Its files are gone (the checkpoint came to another machine without them, say) or cut
                // short: the search starts afresh, as from a torn checkpoint.
                found = None;
            }
        }
        if let Some(c) = found.as_mut() {
            // A group whose level files are gone or cut short is searched again from its seeds.
            c.by_levels.retain(|g| {
                g.files().all(|(name, len)| {
                    Index::read(&dir.0.join(name)).is_ok_and(|i| i.len as u64 == *len)
                })
            });
            if c.keep && c.kept_layers.iter().any(|&l| !dir.kept(l).exists()) {
                c.keep = false;
                c.disk -= c.kept.min(c.disk);
                c.kept = 0;
                c.kept_layers.clear();
            }
            if c.keep {
                // Every finished layer kept on disk (a checkpoint saved after an earlier resumption
                // may list only the layers finished since).
                c.kept_layers = (0..c.layer).filter(|&l| dir.kept(l).exists()).collect();
            }
        }
        let entries = std::fs::read_dir(&dir.0).map_err(|e| io_error(&dir.0, e))?;
        for e in entries.flatten() {
            let path = e.path();
            let keep = found.as_ref().is_some_and(|c| {
                path == dir.state()
                    || c.layers.iter().any(|(l, _, _)| path == dir.file(*l))
                    || (c.keep && c.kept_layers.iter().any(|&l| path == dir.kept(l)))
                    || c.by_levels
                        .iter()
                        .any(|g| g.files().any(|(name, _)| path == dir.0.join(name)))
            });
            if !keep {
                let _ = std::fs::remove_file(&path);
            }
        }
        let Some(c) = found else {
            return Ok(None);
        };
        for (l, written, _) in &c.layers {
            let path = dir.file(*l);
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| io_error(&path, e))?;
            f.set_len(*written).map_err(|e| io_error(&path, e))?;
        }
        Ok(Some(c))
    }
}
