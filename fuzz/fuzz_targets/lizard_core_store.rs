//! Fuzzes `lizard_core::SampleStore` with arbitrary operation sequences (push, push_all, clear, clear_all,
//! prune_before, windowed reads, reads of invalid ids) against a plain model: every buffer holds the samples
//! pushed since its last clear in time order (a sample goes after every sample not later than it, as samples
//! of several cores may arrive out of order), at most `capacity` of them, the oldest in time dropped first, and
//! the drop count is what overflowed.
#![no_main]

use std::collections::VecDeque;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use lizard_core::{Sample, SampleStore, Value, Window};

#[derive(Debug, Arbitrary)]
enum Op {
    Push { id: u8, t: u16, v: i64 },
    PushAll { id: u8, n: u8 },
    Clear { id: u8 },
    ClearAll,
    Prune { t: u16 },
    Read { id: u8, window: Option<(u16, u16)> },
}

const COUNTERS: usize = 3;

#[derive(Default, Clone)]
struct Model {
    samples: VecDeque<Sample>,
    dropped: u64,
    /// A prune met samples out of time order, which the store does not define the result of (it
    /// searches by time): only the length bound and the absence of panics are checked until a clear.
    unordered: bool,
}

/// The store's prune rule on samples in time order: every sample older than `t` goes, except the
/// newest of each core (walking back from `t` until a core comes round again).
fn prune(m: &mut Model, t: u64) {
    if !m
        .samples
        .iter()
        .zip(m.samples.iter().skip(1))
        .all(|(a, b)| a.timestamp_ns <= b.timestamp_ns)
    {
        m.unordered = true;
        return;
    }
    let first = m.samples.iter().take_while(|s| s.timestamp_ns < t).count();
    let mut seen = Vec::new();
    let mut keep = first;
    for i in (0..first).rev() {
        let core = m.samples[i].core;
        if seen.contains(&core) {
            break;
        }
        seen.push(core);
        keep = i;
    }
    m.samples.drain(..keep);
}

fn push(model: &mut [Model], capacity: usize, id: u32, sample: Sample) {
    if let Some(m) = (id as usize).checked_sub(1).and_then(|i| model.get_mut(i)) {
        // Appended, then sorted by time: a stable sort keeps samples of equal time in arrival order.
        m.samples.push_back(sample);
        m.samples.make_contiguous().sort_by_key(|s| s.timestamp_ns);
        if m.samples.len() > capacity {
            m.samples.pop_front();
            m.dropped += 1;
        }
    }
}

fuzz_target!(|input: (u8, Vec<Op>)| {
    let capacity = usize::from(input.0 % 16).max(1);
    let store = SampleStore::new(COUNTERS, capacity);
    let mut model = vec![Model::default(); COUNTERS];
    for op in input.1 {
        match op {
            Op::Push { id, t, v } => {
                let sample = Sample {
                    timestamp_ns: u64::from(t),
                    value: Value::Int(v),
                    core: None,
                };
                let id = u32::from(id % 5);
                assert_eq!(store.push(id, sample), (1..=COUNTERS as u32).contains(&id));
                push(&mut model, capacity, id, sample);
            }
            Op::PushAll { id, n } => {
                let id = u32::from(id % 5);
                let batch: Vec<_> = (0..n)
                    .map(|i| {
                        (
                            id,
                            Sample {
                                timestamp_ns: u64::from(i),
                                value: Value::Float(f64::from(i)),
                                core: None,
                            },
                        )
                    })
                    .collect();
                store.push_all(batch.iter().copied());
                for (id, s) in batch {
                    push(&mut model, capacity, id, s);
                }
            }
            Op::Clear { id } => {
                let id = u32::from(id % 5);
                store.clear([id]);
                if let Some(m) = (id as usize).checked_sub(1).and_then(|i| model.get_mut(i)) {
                    *m = Model::default();
                }
            }
            Op::ClearAll => {
                store.clear_all();
                model.iter_mut().for_each(|m| *m = Model::default());
            }
            Op::Prune { t } => {
                store.prune_before(u64::from(t));
                for m in &mut model {
                    prune(m, u64::from(t));
                }
            }
            Op::Read { id, window } => {
                let id = u32::from(id % 5);
                let window = window.map(|(a, b)| Window {
                    start_ns: u64::from(a),
                    end_ns: u64::from(b),
                });
                let got = store.samples(id, window);
                match (id as usize).checked_sub(1).and_then(|i| model.get(i)) {
                    None => assert!(got.is_none()),
                    Some(m) if m.unordered => {
                        assert!(got.unwrap().len() <= capacity);
                    }
                    Some(m) => {
                        let want: Vec<Sample> = m
                            .samples
                            .iter()
                            .filter(|s| window.is_none_or(|w| w.contains(s.timestamp_ns)))
                            .copied()
                            .collect();
                        assert_eq!(got.unwrap(), want);
                        assert_eq!(store.dropped(id), Some(m.dropped));
                    }
                }
            }
        }
    }
});
