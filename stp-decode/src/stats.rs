//! A report's statistics ([`Stats`]), as a table (`Display`) and, with the `serde` feature, as JSON; and the
//! fixed-size [`Histogram`] its durations and throughputs are kept in.
//!
//! Times are nanoseconds when the STM clock is known (`--stm-clock`, or a FREQ packet), else timestamp
//! ticks ([`Stats::time_unit`] says which). Rates are per second of the trace's timestamps, first to last.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// Sub-buckets per power of two: values below `2 * SUB` are exact, larger ones within 1/`SUB`.
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets for every `u64`.
const BUCKETS: usize = ((64 - SUB_BITS + 1) as usize) * SUB as usize;

/// A log-linear histogram of `u64` values in fixed memory (3,776 counters): values below 128 are counted
/// exactly, larger ones in buckets 1/64 wide relative to their value. Count, sum, minimum and maximum are
/// exact; quantiles are within 1/64 of the true value (exact below 128).
///
/// ```
/// use stp_decode::stats::Histogram;
/// let mut h = Histogram::new();
/// for v in 1..=100 {
///     h.record(v);
/// }
/// assert_eq!((h.count(), h.min(), h.max()), (100, Some(1), Some(100)));
/// assert_eq!(h.quantile(0.5), Some(50));
/// assert_eq!(h.quantile(0.99), Some(99));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Histogram {
    counts: alloc::boxed::Box<[u64]>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl fmt::Debug for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min())
            .field("max", &self.max())
            .finish()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

fn bucket(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let exp = 63 - v.leading_zeros(); // >= SUB_BITS + 1
    let shift = exp - SUB_BITS;
    ((shift as u64 + 1) * SUB + ((v >> shift) - SUB)) as usize
}

/// The smallest value of bucket `i`.
fn bucket_low(i: usize) -> u64 {
    let i = i as u64;
    if i < 2 * SUB {
        return i;
    }
    let shift = i / SUB - 1;
    (SUB + i % SUB) << shift
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Histogram {
            counts: alloc::vec![0; BUCKETS].into_boxed_slice(),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Counts `value` once.
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.record_n(value, 1);
    }

    /// Counts `value` `n` times.
    pub fn record_n(&mut self, value: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.counts[bucket(value)] += n;
        self.count += n;
        self.sum += u128::from(value) * u128::from(n);
        self.min = self.min.min(value);
        self.max = self.max.max(value);
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The smallest value.
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// The largest value.
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// The mean.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The value at quantile `q` (0–1, nearest rank): the lower bound of its bucket, within the minimum
    /// and maximum.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        // `f64::ceil` is std's; the exact rank rounds up by hand (the product is within 0..=count).
        let exact = q.clamp(0.0, 1.0) * self.count as f64;
        let floor = exact as u64;
        let rank = (floor + u64::from((floor as f64) < exact)).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(bucket_low(i).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Counts in power-of-two ranges `[2^k, 2^(k+1))` (and `[0, 1)`), the non-empty ones, in order.
    pub fn bins(&self) -> Vec<Bin> {
        let mut bins: Vec<Bin> = Vec::new();
        for (i, &c) in self.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            let low = bucket_low(i);
            let from = if low == 0 {
                0
            } else {
                1u64 << (63 - low.leading_zeros())
            };
            let to = if low == 0 { 1 } else { from.saturating_mul(2) };
            match bins.last_mut() {
                Some(last) if last.from == from => last.count += c,
                _ => bins.push(Bin { from, to, count: c }),
            }
        }
        bins
    }
}

/// A range of a histogram: `count` values in `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Bin {
    /// Lowest value of the range.
    pub from: u64,
    /// The range's end (not included).
    pub to: u64,
    /// Values in it.
    pub count: u64,
}

/// Where the STM clock's frequency came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum ClockSource {
    /// Given by the user (`--stm-clock`).
    Given,
    /// A FREQ packet of the trace.
    FreqPacket,
    /// Unknown: times are timestamp ticks.
    None,
}

/// The STM clock the report's times are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ClockStats {
    /// Timestamp ticks per second, when known.
    pub hz: Option<u64>,
    /// Where it came from.
    pub source: ClockSource,
}

/// The stream as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct StreamStats {
    /// Bytes of the buffer read.
    pub input_bytes: u64,
    /// Bytes at the start that end a frame whose start was overwritten (not decoded).
    pub partial_frame_bytes: u64,
    /// Formatter frames read (0 for a bare STP stream).
    pub frames: u64,
    /// Bytes of the STM's STP stream: for frames, the bytes of its trace ID (the others are other IDs,
    /// padding, or came before the first ID change).
    pub stream_bytes: u64,
    /// Nibbles skipped while unsynchronised, in all.
    pub unsynced_nibbles: u64,
    /// Of those, the nibbles before the first ASYNC.
    pub nibbles_before_first_sync: u64,
    /// ASYNC packets.
    pub asyncs: u64,
    /// ASYNCs that found sync again after it was lost (not counting the first).
    pub resyncs: u64,
    /// Packets that could not be decoded, in all.
    pub decode_errors: u64,
    /// Those by kind (`invalid_async`, `truncated`, …).
    pub decode_errors_by_kind: BTreeMap<&'static str, u64>,
    /// Formatter frames that could not be demultiplexed (their bytes are lost).
    pub frame_errors: u64,
    /// GERR packets: trace of any master may have been dropped.
    pub global_errors: u64,
    /// MERR packets before any master was known.
    pub master_errors_unattributed: u64,
    /// Data packets, in all.
    pub data_packets: u64,
    /// Data packets before the master or channel was known (not assembled).
    pub unattributed_packets: u64,
    /// FLAG packets.
    pub flags: u64,
    /// Other elements (triggers, USER, TIME, XSYNC, NULL_TS, FREQ).
    pub other_elements: u64,
    /// Whole messages.
    pub messages: u64,
    /// Their bytes.
    pub message_bytes: u64,
    /// Messages that could not be decoded (included in `messages`).
    pub undecodable: u64,
    /// Data that did not make whole messages.
    pub torn: TornStats,
}

/// Data that did not make whole messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TornStats {
    /// Pieces (one per channel each time).
    pub messages: u64,
    /// Their data packets.
    pub packets: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Pieces by cause (`before_first_message`, `sync_lost`, `overflow`, `end_of_trace`).
    pub by_cause: BTreeMap<&'static str, u64>,
}

/// One channel of a master.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ChannelStats {
    /// The channel.
    pub channel: u16,
    /// Its name in the dictionary.
    pub name: Option<String>,
    /// Data packets.
    pub data_packets: u64,
    /// Whole messages.
    pub messages: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Messages per second of the trace.
    pub messages_per_s: Option<f64>,
    /// Bytes per second of the trace.
    pub bytes_per_s: Option<f64>,
    /// Messages that could not be decoded.
    pub undecodable: u64,
    /// Data that did not make whole messages.
    pub torn: TornStats,
}

/// One master.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct MasterStats {
    /// The master.
    pub master: u16,
    /// What wrote on it (`DSP3`, `Arm0`, `CPT 0x8c`, `master 0x20`).
    pub name: String,
    /// A hardware (CP Tracer) master.
    pub hardware: bool,
    /// Data packets.
    pub data_packets: u64,
    /// Whole messages.
    pub messages: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Messages per second of the trace.
    pub messages_per_s: Option<f64>,
    /// Bytes per second of the trace.
    pub bytes_per_s: Option<f64>,
    /// Messages that could not be decoded.
    pub undecodable: u64,
    /// Those by reason (`no_image`, `argument_count`, …).
    pub undecodable_by_reason: BTreeMap<&'static str, u64>,
    /// MERR packets: the master's trace was dropped.
    pub overflows: u64,
    /// Data that did not make whole messages.
    pub torn: TornStats,
    /// Its channels, in order.
    pub channels: Vec<ChannelStats>,
}

/// One `--span`.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SpanStats {
    /// Its name.
    pub name: String,
    /// Spans measured.
    pub count: u64,
    /// The shortest.
    pub min: Option<u64>,
    /// The median (within 1/64).
    pub median: Option<u64>,
    /// The 99th percentile (within 1/64).
    pub p99: Option<u64>,
    /// The longest.
    pub max: Option<u64>,
    /// The mean.
    pub mean: Option<f64>,
    /// Ends without a start before them on their master.
    pub unmatched_ends: u64,
    /// Starts followed by another start before an end (the earlier one is dropped).
    pub restarts: u64,
    /// Starts still open at the end of the trace.
    pub unfinished: u64,
    /// Durations in power-of-two ranges.
    pub histogram: Vec<Bin>,
}

/// Words of one hardware master.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CpTracerMaster {
    /// The master.
    pub master: u16,
    /// 32-bit words (CP Tracer messages).
    pub words: u64,
    /// Data packets of other widths (not CP Tracer words as described).
    pub other_packets: u64,
}

/// Transactions of one master id (a field of the user's layout).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct MasterIdStats {
    /// The id.
    pub id: u32,
    /// Transactions.
    pub transactions: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// CP Tracer words read with the user's layout.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LayoutStats {
    /// Transactions (words).
    pub transactions: u64,
    /// Bytes of all transactions.
    pub bytes: u64,
    /// Throughput over the whole trace, MB/s (10⁶ bytes).
    pub mb_per_s: Option<f64>,
    /// The window, in the report's time unit.
    pub window: Option<u64>,
    /// Windows from the first word to the last.
    pub windows: u64,
    /// The lowest window's throughput, MB/s.
    pub window_mb_per_s_min: Option<f64>,
    /// The median window's throughput, MB/s.
    pub window_mb_per_s_median: Option<f64>,
    /// The highest window's throughput, MB/s.
    pub window_mb_per_s_max: Option<f64>,
    /// Transactions per master id (the first 4,096 ids seen).
    pub per_master_id: Vec<MasterIdStats>,
    /// Transactions of ids beyond the first 4,096.
    pub other_ids: u64,
}

/// CP Tracer words.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CpTracerStats {
    /// Per hardware master, raw.
    pub masters: Vec<CpTracerMaster>,
    /// With the user's layout.
    pub layout: Option<LayoutStats>,
}

/// Everything a report counted.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Stats {
    /// The STM clock.
    pub clock: ClockStats,
    /// `ns`, or `ticks` without a clock.
    pub time_unit: &'static str,
    /// From the first timestamp to the last, in the time unit.
    pub duration: u64,
    /// The stream.
    pub stream: StreamStats,
    /// Software and hardware masters, in order.
    pub masters: Vec<MasterStats>,
    /// Spans, in the order given.
    pub spans: Vec<SpanStats>,
    /// CP Tracer words.
    pub cptracer: CpTracerStats,
}

fn opt<T: fmt::Display>(v: Option<T>) -> String {
    match v {
        Some(v) => alloc::format!("{v}"),
        None => String::from("-"),
    }
}

fn rate(v: Option<f64>) -> String {
    match v {
        Some(r) if r >= 100.0 => alloc::format!("{r:.0}"),
        Some(r) => alloc::format!("{r:.2}"),
        None => String::from("-"),
    }
}

fn torn_text(t: &TornStats) -> impl fmt::Display + '_ {
    struct T<'a>(&'a TornStats);
    impl fmt::Display for T<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{}", self.0.messages)?;
            if self.0.messages > 0 {
                f.write_str(" (")?;
                for (i, (cause, n)) in self.0.by_cause.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{cause} {n}")?;
                }
                f.write_str(")")?;
            }
            Ok(())
        }
    }
    T(t)
}

impl fmt::Display for Stats {
    /// The statistics as text tables.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = self.time_unit;
        let s = &self.stream;
        match self.clock.hz {
            Some(hz) => writeln!(
                f,
                "clock: {hz} Hz ({:?}); duration {} {unit}",
                self.clock.source, self.duration
            )?,
            None => writeln!(
                f,
                "clock: unknown (times in timestamp ticks); duration {} ticks",
                self.duration
            )?,
        }
        writeln!(
            f,
            "stream: {} bytes read, {} skipped before the first frame, {} frames, {} bytes of the STM's stream",
            s.input_bytes, s.partial_frame_bytes, s.frames, s.stream_bytes
        )?;
        writeln!(
            f,
            "  {} nibbles before the first ASYNC, {} unsynchronised in all",
            s.nibbles_before_first_sync, s.unsynced_nibbles
        )?;
        write!(
            f,
            "  {} ASYNCs, {} resyncs, {} decode errors",
            s.asyncs, s.resyncs, s.decode_errors
        )?;
        for (kind, n) in &s.decode_errors_by_kind {
            write!(f, " [{kind} {n}]")?;
        }
        writeln!(
            f,
            ", {} frame errors, {} GERR, {} MERR of unknown masters",
            s.frame_errors, s.global_errors, s.master_errors_unattributed
        )?;
        writeln!(
            f,
            "  {} data packets ({} before a master was known), {} flags, {} other elements",
            s.data_packets, s.unattributed_packets, s.flags, s.other_elements
        )?;
        writeln!(
            f,
            "  {} messages ({} bytes, {} undecodable); torn: {} ({} packets, {} bytes)",
            s.messages,
            s.message_bytes,
            s.undecodable,
            torn_text(&s.torn),
            s.torn.packets,
            s.torn.bytes
        )?;
        writeln!(f)?;
        writeln!(
            f,
            "{:<14} {:>7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>6} {:>5}  torn",
            "master", "channel", "packets", "messages", "bytes", "msg/s", "B/s", "undec", "MERR"
        )?;
        for m in &self.masters {
            writeln!(
                f,
                "{:<14} {:>7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>6} {:>5}  {}",
                m.name,
                "all",
                m.data_packets,
                m.messages,
                m.bytes,
                rate(m.messages_per_s),
                rate(m.bytes_per_s),
                m.undecodable,
                m.overflows,
                torn_text(&m.torn)
            )?;
            for c in &m.channels {
                writeln!(
                    f,
                    "{:<14} {:>7} {:>8} {:>10} {:>10} {:>10} {:>10} {:>6} {:>5}  {}{}",
                    "",
                    c.channel,
                    c.data_packets,
                    c.messages,
                    c.bytes,
                    rate(c.messages_per_s),
                    rate(c.bytes_per_s),
                    c.undecodable,
                    "",
                    torn_text(&c.torn),
                    c.name
                        .as_deref()
                        .map(|n| alloc::format!("  ({n})"))
                        .unwrap_or_default()
                )?;
            }
            if !m.undecodable_by_reason.is_empty() {
                write!(f, "{:<14} undecodable:", "")?;
                for (reason, n) in &m.undecodable_by_reason {
                    write!(f, " {reason} {n}")?;
                }
                writeln!(f)?;
            }
        }
        for span in &self.spans {
            writeln!(f)?;
            writeln!(
                f,
                "span {}: {} (min {}, median {}, p99 {}, max {} {unit}); {} ends without a start, {} restarts, {} unfinished",
                span.name,
                span.count,
                opt(span.min),
                opt(span.median),
                opt(span.p99),
                opt(span.max),
                span.unmatched_ends,
                span.restarts,
                span.unfinished
            )?;
            let most = span.histogram.iter().map(|b| b.count).max().unwrap_or(0);
            for bin in &span.histogram {
                let bar = (bin.count * 40).div_ceil(most.max(1)) as usize;
                writeln!(
                    f,
                    "  [{:>12}, {:>12}) {:>8} {}",
                    bin.from,
                    bin.to,
                    bin.count,
                    "#".repeat(bar)
                )?;
            }
        }
        let cpt = &self.cptracer;
        if !cpt.masters.is_empty() {
            writeln!(f)?;
            for m in &cpt.masters {
                writeln!(
                    f,
                    "CP Tracer master 0x{:02x}: {} words, {} packets of other widths",
                    m.master, m.words, m.other_packets
                )?;
            }
        }
        if let Some(l) = &cpt.layout {
            writeln!(
                f,
                "CP Tracer layout: {} transactions, {} bytes, {} MB/s over the trace",
                l.transactions,
                l.bytes,
                rate(l.mb_per_s)
            )?;
            if let Some(window) = l.window {
                writeln!(
                    f,
                    "  {} windows of {window} {unit}: MB/s min {}, median {}, max {}",
                    l.windows,
                    rate(l.window_mb_per_s_min),
                    rate(l.window_mb_per_s_median),
                    rate(l.window_mb_per_s_max)
                )?;
            }
            for id in &l.per_master_id {
                writeln!(
                    f,
                    "  master id 0x{:x}: {} transactions, {} bytes",
                    id.id, id.transactions, id.bytes
                )?;
            }
            if l.other_ids > 0 {
                writeln!(f, "  other ids: {} transactions", l.other_ids)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_cover_every_value() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(127), 127);
        assert_eq!(bucket(128), 128);
        assert_eq!(bucket_low(128), 128);
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
        for i in 0..BUCKETS {
            assert_eq!(bucket(bucket_low(i)), i, "bucket {i}");
            if i + 1 < BUCKETS {
                assert_eq!(bucket(bucket_low(i + 1) - 1), i);
            }
        }
    }

    #[test]
    fn quantiles_are_within_one_sixty_fourth() {
        let mut h = Histogram::new();
        let values: Vec<u64> = (0..10_000u64).map(|i| 1_000 + i * 997).collect();
        for &v in &values {
            h.record(v);
        }
        for q in [0.5, 0.99] {
            let exact = values[((q * values.len() as f64).ceil() as usize).max(1) - 1];
            let got = h.quantile(q).unwrap();
            assert!(
                got <= exact && exact - got <= exact / 64,
                "{q}: {got} against {exact}"
            );
        }
        assert_eq!(h.mean(), Some(values.iter().sum::<u64>() as f64 / 10_000.0));
        let bins = h.bins();
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), 10_000);
        assert!(bins.windows(2).all(|w| w[0].to <= w[1].from));
        assert_eq!(Histogram::new().quantile(0.5), None);
        let mut zeros = Histogram::new();
        zeros.record_n(0, 3);
        assert_eq!(
            zeros.bins(),
            [Bin {
                from: 0,
                to: 1,
                count: 3
            }]
        );
    }
}
