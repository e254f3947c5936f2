//! What a server found when it picked up a shared ring: the records it kept, those lost in the crash, and
//! where (and why) it stopped trusting what it found.

use std::fmt;

use super::walk::Torn;

/// Where a server stopped trusting a ring it picked up, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trim {
    /// Offset of the record in the data.
    pub offset: u64,
    /// The sequence number expected there.
    pub seq: u64,
    /// What is wrong with it.
    pub reason: Torn,
}

/// What [`TraceRing::open_shared`](crate::TraceRing::open_shared) found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recovery {
    /// The file was created: there was nothing to pick up.
    pub created: bool,
    /// Records found whole and kept.
    pub kept: u64,
    /// The sequence number of the oldest record kept.
    pub first_seq: u64,
    /// The sequence number the next record gets.
    pub next_seq: u64,
    /// Records a server had begun to write and not committed when it stopped (in flight at a crash), and
    /// records the header counted after a trim.
    pub lost: u64,
    /// Where the walk stopped trusting the records, when something there did not hold together.
    pub trim: Option<Trim>,
    /// The records lost in every crash so far, this one included.
    pub lost_in_all: u64,
    /// How many times a server has picked the ring up.
    pub restarts: u64,
    /// The process id of the server that wrote the ring before.
    pub previous_writer: u32,
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.created {
            return write!(
                f,
                "a new ring; the first record gets sequence {}",
                self.next_seq
            );
        }
        write!(
            f,
            "picked up the ring left by process {}: {} records kept",
            self.previous_writer, self.kept
        )?;
        if self.kept > 0 {
            write!(f, " (sequence {} to {})", self.first_seq, self.next_seq - 1)?;
        }
        match self.lost {
            0 => f.write_str(", none lost")?,
            n => write!(
                f,
                ", {n} lost (written when the server stopped, never committed)"
            )?,
        }
        if let Some(trim) = &self.trim {
            write!(
                f,
                "; trimmed at offset {} (sequence {}): {}",
                trim.offset, trim.seq, trim.reason
            )?;
        }
        write!(
            f,
            "; the next record gets sequence {}; {} records lost in {} pick-ups",
            self.next_seq, self.lost_in_all, self.restarts
        )
    }
}
