//! A trace ring in a shared, file-backed mapping that outlives its server: records committed so that no
//! reader trusts a torn one, picked up whole by the next server after a crash, and readable by any process
//! while the server writes.
//!
//! - [`layout`]: the file's header, a record's slot and its commit word.
//! - the one walk over the records that the next server ([`Recovery`]) and readers ([`RingReader`]) share,
//!   and why it stops trusting a record ([`Torn`]).
//! - [`TraceRing::open_shared`](crate::TraceRing::open_shared): the server's side.
//! - [`RingReader`]: another process's side: a consistent snapshot, or the records as they are committed.
//!
//! What it keeps, and when: a file on tmpfs (`/dev/shm`) survives the server's process (a crash, `kill -9`,
//! the OOM killer), not a reboot; a file on disk survives a power cut only as far as the kernel had written
//! it back, which [`SyncPolicy`] bounds.

mod inspect;
pub mod layout;
mod open;
mod reader;
mod recovery;
mod sync;
pub(crate) mod walk;

pub use inspect::{inspect, Inspection};
pub use reader::{Cursor, RingReader, Snapshot, SnapshotRecord};
pub use recovery::{Recovery, Trim};
pub use sync::{BadSyncPolicy, SyncPolicy};
pub use walk::Torn;

use std::path::PathBuf;

/// Why a file is not a shared ring this build can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RingFormatError {
    /// The file's first bytes are not a shared ring's magic.
    #[error(
        "not a shared trace ring (its first bytes are not the ring's magic); it is not overwritten"
    )]
    NotARing,
    /// The file is a shared trace ring of another format version.
    #[error(
        "a shared trace ring of format version {found}, this build reads version {}",
        layout::VERSION
    )]
    Version {
        /// The file's version.
        found: u32,
    },
    /// The header's geometry does not hold together.
    #[error("its {what} is {found}, expected {expected}")]
    Geometry {
        /// Which part of the geometry.
        what: &'static str,
        /// What the file says.
        found: u64,
        /// What it should be.
        expected: u64,
    },
}

/// Why a shared ring file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SharedRingError {
    /// The file could not be opened, created, sized, locked or mapped.
    #[error("{}: cannot {what}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// Another server holds the file's lock.
    #[error("{}: another server writes this ring (it holds the file's lock)", path.display())]
    Busy {
        /// The file.
        path: PathBuf,
    },
    /// The file is not a ring this build reads; it is left as it is.
    #[error("{}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: RingFormatError,
    },
    /// The file's capacity is not the one asked for; it is left as it is.
    #[error(
        "{}: the ring holds {file} bytes of records, {asked} were asked for (leave out the capacity to \
         take the file's, or name another file)",
        path.display()
    )]
    CapacityMismatch {
        /// The file.
        path: PathBuf,
        /// Its capacity.
        file: u64,
        /// The capacity asked for.
        asked: u64,
    },
    /// A capacity too small for one record.
    #[error(
        "a capacity of {capacity} bytes cannot hold a record (at least {} bytes)",
        layout::MIN_SLOT
    )]
    Capacity {
        /// The capacity asked for.
        capacity: u64,
    },
}
