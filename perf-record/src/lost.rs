//! PERF_RECORD_LOST: the kernel could not write records into a full ring, and says how many in the next
//! record it can write. Body: `id` (the event whose records were lost), `lost` (how many), then the
//! `sample_id_all` fields when the event asked for them.

use crate::record::{record_header, PerfRecord, PerfRecordError, WordReader, PERF_RECORD_LOST};

/// A decoded PERF_RECORD_LOST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LostRecord {
    /// The perf id of the event whose records were lost.
    pub id: u64,
    /// How many records were lost.
    pub lost: u64,
}

impl LostRecord {
    /// Decodes the body of a PERF_RECORD_LOST (its type is not checked; [`PerfRecord::decode`] does).
    pub fn parse(record: &PerfRecord<'_>) -> Result<LostRecord, PerfRecordError> {
        let mut r = WordReader::new(record);
        Ok(LostRecord {
            id: r.word("lost id")?,
            lost: r.word("lost count")?,
        })
    }

    /// Appends the whole record (header, `id`, `lost`) as the kernel writes it without `sample_id_all`: for
    /// encoders (a simulated kernel) and tests.
    pub fn encode_words(&self, out: &mut Vec<u64>) {
        out.extend([record_header(PERF_RECORD_LOST, 0, 2), self.id, self.lost]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{PerfRecords, TypedRecord};

    #[test]
    fn a_lost_record_round_trips_and_a_short_one_is_an_error() {
        let lost = LostRecord { id: 100, lost: 7 };
        let mut words = Vec::new();
        lost.encode_words(&mut words);
        // The `sample_id_all` fields after it are not read.
        words[0] = record_header(PERF_RECORD_LOST, 0, 3);
        words.push(0xdead);
        let mut typed = PerfRecords::raw(&words).typed();
        assert_eq!(typed.next(), Some(Ok(TypedRecord::Lost(lost))));
        assert_eq!(typed.next(), None);
        let short = [record_header(PERF_RECORD_LOST, 0, 1), 100];
        assert_eq!(
            PerfRecords::raw(&short).typed().next(),
            Some(Err(PerfRecordError::ShortRecord {
                field: "lost count"
            }))
        );
    }
}
