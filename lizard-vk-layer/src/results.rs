//! A submitted command buffer's workloads with the results the GPU copied for them: the raw timestamps
//! and pipeline statistics of each, read from the readback buffer, with its full label stack (the labels
//! open in the primary where a secondary was executed, then the secondary's own).

use std::sync::Arc;

use crate::message::Submitted;
use crate::query_blocks::BlockKind;
use crate::queue::Readback;
use crate::workload::{Entry, Recording, Slot, Workload};

/// One workload of a submission, as read.
#[derive(Debug, Clone)]
pub(crate) struct Read {
    /// The workload as recorded.
    pub workload: Workload,
    /// Every label open at its start, outermost first.
    pub labels: Vec<Arc<str>>,
    /// The command buffer it was recorded in.
    pub command_buffer: u64,
    /// Whether that is a secondary command buffer.
    pub secondary: bool,
    /// The recording's number.
    pub recording: u64,
    /// Device ticks before and after it.
    pub ticks: Option<(u64, u64)>,
    /// Its pipeline statistics, in the order of the block kind's statistics.
    pub statistics: Option<Vec<u64>>,
    /// Why it has no time, when it has none.
    pub untimed: Option<String>,
}

/// The query result of `slot` of `recording`: its values when available.
fn result(
    recording: &Recording,
    offsets: &[u64],
    readback: &Readback,
    slot: Slot,
) -> Result<Vec<u64>, &'static str> {
    let block = recording
        .blocks
        .get(slot.block as usize)
        .ok_or("a query of an unknown block")?;
    let base = *offsets
        .get(slot.block as usize)
        .ok_or("a query of an unknown block")?;
    if !block
        .written
        .get(slot.query as usize)
        .copied()
        .unwrap_or(false)
    {
        return Err("the command buffer never completed the query (a render pass left open)");
    }
    let kind: BlockKind = block.kind;
    let offset = base + u64::from(slot.query) * kind.stride();
    let mut words = readback
        .words(offset, kind.values() + 1)
        .ok_or("a query result outside the readback buffer")?;
    let available = words.pop().unwrap_or(0);
    if available == 0 {
        return Err("the query was not written (its command did not run)");
    }
    Ok(words)
}

/// The workloads of `submitted`, in execution order, read from `readback`.
pub(crate) fn read(submitted: &Submitted, readback: Option<&Readback>) -> Vec<Read> {
    // Executions of each recording in the tree: only the last one's results survive, as each execution
    // resets the recording's queries before writing them again.
    let mut remaining: Vec<(*const Recording, u32)> = Vec::new();
    count(&submitted.recording, &mut remaining, 0);
    let mut out = Vec::new();
    walk(
        submitted,
        readback,
        &submitted.recording,
        &[],
        &mut remaining,
        &mut out,
        0,
    );
    out
}

fn count(recording: &Arc<Recording>, remaining: &mut Vec<(*const Recording, u32)>, depth: u32) {
    if depth > 8 {
        return;
    }
    let key = Arc::as_ptr(recording);
    match remaining.iter_mut().find(|(k, _)| *k == key) {
        Some((_, n)) => *n += 1,
        None => remaining.push((key, 1)),
    }
    for entry in &recording.entries {
        if let Entry::Execute { recording, .. } = entry {
            count(recording, remaining, depth + 1);
        }
    }
}

fn walk(
    submitted: &Submitted,
    readback: Option<&Readback>,
    recording: &Arc<Recording>,
    outer: &[Arc<str>],
    remaining: &mut Vec<(*const Recording, u32)>,
    out: &mut Vec<Read>,
    depth: u32,
) {
    if depth > 8 {
        return;
    }
    let key = Arc::as_ptr(recording);
    let last = match remaining.iter_mut().find(|(k, _)| *k == key) {
        Some((_, n)) => {
            *n = n.saturating_sub(1);
            *n == 0
        }
        None => true,
    };
    let offsets = submitted
        .copies
        .iter()
        .find(|(r, _)| Arc::ptr_eq(r, recording))
        .map(|(_, o)| o.as_slice());
    for entry in &recording.entries {
        match entry {
            Entry::Workload(w) => {
                let labels: Vec<Arc<str>> = outer.iter().chain(w.labels.iter()).cloned().collect();
                let mut read = Read {
                    workload: w.clone(),
                    labels,
                    command_buffer: recording.command_buffer,
                    secondary: recording.secondary,
                    recording: recording.serial,
                    ticks: None,
                    statistics: None,
                    untimed: None,
                };
                match (offsets, readback) {
                    _ if !last => read.untimed = Some(
                        "executed again later in the same submission, which overwrote its results"
                            .to_owned(),
                    ),
                    (Some(offsets), Some(readback)) => {
                        match w.timestamps {
                            Some([a, b]) => match (
                                result(recording, offsets, readback, a),
                                result(recording, offsets, readback, b),
                            ) {
                                (Ok(a), Ok(b)) => read.ticks = Some((a[0], b[0])),
                                (Err(e), _) | (_, Err(e)) => read.untimed = Some(e.to_owned()),
                            },
                            None => read.untimed = w.untimed.map(str::to_owned),
                        }
                        if let Some(slot) = w.statistics {
                            read.statistics = result(recording, offsets, readback, slot).ok();
                        }
                    }
                    _ => {
                        read.untimed = Some(
                            submitted
                                .untimed
                                .clone()
                                .unwrap_or_else(|| "its results were not copied".to_owned()),
                        )
                    }
                }
                out.push(read);
            }
            Entry::Execute {
                recording: inner,
                labels,
            } => {
                let outer: Vec<Arc<str>> = outer.iter().chain(labels.iter()).cloned().collect();
                walk(
                    submitted,
                    readback,
                    inner,
                    &outer,
                    remaining,
                    out,
                    depth + 1,
                );
            }
        }
    }
}
