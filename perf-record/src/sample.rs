//! PERF_RECORD_SAMPLE bodies, decoded with the `sample_type` and `read_format` of the event that wrote them.
//!
//! Fields come in the kernel's order: IDENTIFIER, IP, TID (pid, tid), TIME, ADDR, ID, STREAM_ID, CPU (cpu, res),
//! PERIOD, READ, then CALLCHAIN, RAW, BRANCH_STACK, REGS_USER, … Decoding stops after READ: the counter values
//! are all a counter reader needs, and the fields after it (call chains, registers, raw tracepoint data) are kept
//! as [`SampleRecord::tail`], opaque.
//!
//! READ is laid out as a `read()` of the writer is ([`ReadValues`]).

use crate::attr::{ReadFormat, SampleType};
use crate::read::{ReadValue, ReadValues};
use crate::record::{record_header, PerfRecord, PerfRecordError, WordReader, PERF_RECORD_SAMPLE};
use crate::words::WordSlice;

/// The two attribute fields that fix a sample's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SampleLayout {
    /// The writing event's `sample_type`.
    pub sample_type: SampleType,
    /// The writing event's `read_format`.
    pub read_format: ReadFormat,
}

/// A decoded PERF_RECORD_SAMPLE; each field is `None` when the layout does not carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRecord<'a> {
    /// `PERF_SAMPLE_IDENTIFIER`.
    pub identifier: Option<u64>,
    /// `PERF_SAMPLE_IP`.
    pub ip: Option<u64>,
    /// `PERF_SAMPLE_TID`: (pid, tid).
    pub pid_tid: Option<(u32, u32)>,
    /// `PERF_SAMPLE_TIME`, on the event's clock (CLOCK_MONOTONIC_RAW for gatord when `use_clockid`).
    pub time: Option<u64>,
    /// `PERF_SAMPLE_ADDR`.
    pub addr: Option<u64>,
    /// `PERF_SAMPLE_ID`.
    pub id: Option<u64>,
    /// `PERF_SAMPLE_STREAM_ID`: the id of the group leader that wrote the sample.
    pub stream_id: Option<u64>,
    /// `PERF_SAMPLE_CPU`.
    pub cpu: Option<u32>,
    /// `PERF_SAMPLE_PERIOD`.
    pub period: Option<u64>,
    /// `PERF_SAMPLE_READ`.
    pub read: Option<ReadValues<'a>>,
    /// The words after READ, not decoded.
    pub tail: WordSlice<'a>,
}

impl<'a> SampleRecord<'a> {
    /// Decodes the body of a PERF_RECORD_SAMPLE written by an event with `layout`.
    pub fn parse(
        record: &PerfRecord<'a>,
        layout: SampleLayout,
    ) -> Result<SampleRecord<'a>, PerfRecordError> {
        let st = layout.sample_type;
        let mut r = WordReader::new(record);
        let opt = |bit: u64,
                   field: &'static str,
                   r: &mut WordReader<'a>|
         -> Result<Option<u64>, PerfRecordError> {
            if st.contains(bit) {
                r.word(field).map(Some)
            } else {
                Ok(None)
            }
        };
        let identifier = opt(SampleType::IDENTIFIER, "identifier", &mut r)?;
        let ip = opt(SampleType::IP, "ip", &mut r)?;
        let pid_tid =
            opt(SampleType::TID, "pid/tid", &mut r)?.map(|w| (w as u32, (w >> 32) as u32));
        let time = opt(SampleType::TIME, "time", &mut r)?;
        let addr = opt(SampleType::ADDR, "addr", &mut r)?;
        let id = opt(SampleType::ID, "id", &mut r)?;
        let stream_id = opt(SampleType::STREAM_ID, "stream_id", &mut r)?;
        let cpu = opt(SampleType::CPU, "cpu", &mut r)?.map(|w| w as u32);
        let period = opt(SampleType::PERIOD, "period", &mut r)?;
        let read = if st.contains(SampleType::READ) {
            Some(ReadValues::read_from(&mut r, layout.read_format)?)
        } else {
            None
        };
        Ok(SampleRecord {
            identifier,
            ip,
            pid_tid,
            time,
            addr,
            id,
            stream_id,
            cpu,
            period,
            read,
            tail: r.rest(),
        })
    }

    /// Appends the whole record (header included) as u64 words for `layout`: each field the layout carries
    /// from `self` (0 when `None`), the READ field from `values` (group or single by `read_format`; a single
    /// read uses the first value), then the tail words. For encoders (the simulator) and tests.
    pub fn encode_words(
        &self,
        layout: SampleLayout,
        time_enabled: u64,
        time_running: u64,
        values: &[ReadValue],
        out: &mut Vec<u64>,
    ) {
        let st = layout.sample_type;
        let start = out.len();
        out.push(0);
        let field = |bit: u64, value: Option<u64>, out: &mut Vec<u64>| {
            if st.contains(bit) {
                out.push(value.unwrap_or(0));
            }
        };
        field(SampleType::IDENTIFIER, self.identifier, out);
        field(SampleType::IP, self.ip, out);
        field(
            SampleType::TID,
            self.pid_tid
                .map(|(p, t)| u64::from(p) | (u64::from(t) << 32)),
            out,
        );
        field(SampleType::TIME, self.time, out);
        field(SampleType::ADDR, self.addr, out);
        field(SampleType::ID, self.id, out);
        field(SampleType::STREAM_ID, self.stream_id, out);
        field(SampleType::CPU, self.cpu.map(u64::from), out);
        field(SampleType::PERIOD, self.period, out);
        if st.contains(SampleType::READ) {
            ReadValues::encode(layout.read_format, time_enabled, time_running, values, out);
        }
        out.extend(self.tail.iter().map_while(Result::ok));
        out[start] = record_header(PERF_RECORD_SAMPLE, 0, out.len() - start - 1);
    }

    /// The sample's id: `IDENTIFIER`, else `ID`.
    pub fn sample_id(&self) -> Option<u64> {
        self.identifier.or(self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::PerfRecords;

    const GATORD_GROUP: SampleLayout = SampleLayout {
        sample_type: SampleType(0x10217),
        read_format: ReadFormat(0xf),
    };

    fn parse_words(
        words: &[u64],
        layout: SampleLayout,
    ) -> Result<(u64, Vec<ReadValue>), PerfRecordError> {
        let mut all = vec![record_header(PERF_RECORD_SAMPLE, 2, words.len())];
        all.extend_from_slice(words);
        let record = PerfRecords::raw(&all).next().unwrap().unwrap();
        let sample = SampleRecord::parse(&record, layout)?;
        Ok((
            sample.time.unwrap_or(0),
            sample
                .read
                .map(|r| r.values().collect())
                .unwrap_or_default(),
        ))
    }

    #[test]
    fn first_sample_of_the_perf_session_recording() {
        // The first PERF_RECORD_SAMPLE on CPU 0 of `shared/data/gatord-9.7.2/perf-session/d2c.bin` (gatord
        // 9.7.2): written by its CPU clock event (id 0x4d2c), group of context switches (0x4d2b) + CPU clock.
        let words = [
            0x4d2c,
            0x7f7a_d424_4ce4,
            0x4e89_0000_4e89,
            0x310_955b_f3fc,
            0x4d2c,
            2,
            0xf_6d28,
            0xf_6d28,
            0,
            0x4d2b,
            0xf_5a19,
            0x4d2c,
        ];
        let (time, values) = parse_words(&words, GATORD_GROUP).unwrap();
        assert_eq!(time, 0x310_955b_f3fc);
        assert_eq!(
            values,
            [
                ReadValue {
                    value: 0,
                    id: Some(0x4d2b),
                    lost: None
                },
                ReadValue {
                    value: 0xf_5a19,
                    id: Some(0x4d2c),
                    lost: None
                }
            ]
        );
    }

    #[test]
    fn fields_in_kernel_order() {
        let layout = SampleLayout {
            sample_type: SampleType(
                SampleType::IP
                    | SampleType::TID
                    | SampleType::TIME
                    | SampleType::ADDR
                    | SampleType::ID
                    | SampleType::STREAM_ID
                    | SampleType::CPU
                    | SampleType::PERIOD
                    | SampleType::READ
                    | SampleType::CALLCHAIN,
            ),
            read_format: ReadFormat(
                ReadFormat::ID | ReadFormat::LOST | ReadFormat::TOTAL_TIME_ENABLED,
            ),
        };
        let words = [
            1,
            (7 << 32) | 6,
            3,
            4,
            5,
            6,
            9,
            1000,
            42,
            100,
            5,
            0,
            1,
            0xdead,
        ];
        let mut all = vec![record_header(PERF_RECORD_SAMPLE, 0, words.len())];
        all.extend_from_slice(&words);
        let record = PerfRecords::raw(&all).next().unwrap().unwrap();
        let s = SampleRecord::parse(&record, layout).unwrap();
        assert_eq!(
            (
                s.ip,
                s.pid_tid,
                s.time,
                s.addr,
                s.id,
                s.stream_id,
                s.cpu,
                s.period
            ),
            (
                Some(1),
                Some((6, 7)),
                Some(3),
                Some(4),
                Some(5),
                Some(6),
                Some(9),
                Some(1000)
            )
        );
        assert_eq!(s.sample_id(), Some(5));
        assert_eq!(
            s.read,
            Some(ReadValues::Single {
                value: ReadValue {
                    value: 42,
                    id: Some(5),
                    lost: Some(0)
                },
                time_enabled: Some(100),
                time_running: None
            })
        );
        assert_eq!(s.tail.iter().count(), 2);
    }

    #[test]
    fn a_group_larger_than_its_record_is_an_error() {
        let words = [0x4d2c, 1, 2, 3, 0x4d2c, u64::MAX, 0, 0];
        assert_eq!(
            parse_words(&words, GATORD_GROUP),
            Err(PerfRecordError::GroupTooLarge {
                nr: u64::MAX,
                available: 0
            })
        );
        let words = [0x4d2c, 1, 2, 3, 0x4d2c, 2, 0, 0, 7, 8];
        assert!(matches!(
            parse_words(&words, GATORD_GROUP),
            Err(PerfRecordError::GroupTooLarge {
                nr: 2,
                available: 2
            })
        ));
    }

    #[test]
    fn a_record_shorter_than_its_layout_is_an_error() {
        assert_eq!(
            parse_words(&[0x4d2c, 1], GATORD_GROUP),
            Err(PerfRecordError::ShortRecord { field: "pid/tid" })
        );
    }
}
