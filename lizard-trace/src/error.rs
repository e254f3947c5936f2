//! The error types, one enum per concern: text fields, record heads, wire messages, received payload memfds,
//! the ring, ring files, the client, the server and capacity texts.

use std::io;
use std::time::Duration;

use thiserror::Error;

use crate::ack::Refusal;
use crate::device_support::Unavailable;
use crate::socket_name::SocketName;

impl std::error::Error for Unavailable {}
impl std::error::Error for Refusal {}

/// A module tag or file name that does not fit its fixed-size field.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TagError {
    /// The text is longer than the field.
    #[error("{len} bytes do not fit a {max}-byte field")]
    TooLong {
        /// Length of the text in bytes.
        len: usize,
        /// Size of the field.
        max: usize,
    },
    /// The text contains a NUL byte, which the zero-padded field reserves for padding.
    #[error("NUL byte at offset {at}")]
    Nul {
        /// Offset of the first NUL.
        at: usize,
    },
    /// A decoded field has a non-NUL byte after its padding started.
    #[error("non-zero byte at offset {at} inside the padding")]
    BadPadding {
        /// Offset of the offending byte.
        at: usize,
    },
    /// A decoded field is not UTF-8.
    #[error("field is not UTF-8")]
    NotUtf8(#[source] std::str::Utf8Error),
}

/// A stored record head that cannot be decoded.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeadError {
    /// Fewer bytes than a head.
    #[error("record head needs {needed} bytes, got {len}")]
    Truncated {
        /// Bytes available.
        len: usize,
        /// Bytes of a head.
        needed: usize,
    },
    /// The module tag field is invalid.
    #[error("bad module tag")]
    Module(#[source] TagError),
    /// The file name field is invalid.
    #[error("bad file name")]
    File(#[source] TagError),
    /// The origin bytes name no known origin, or a copy mode, offset or device where the origin has none.
    #[error("bad origin {kind} with copy mode {mode}")]
    Origin {
        /// The origin byte.
        kind: u8,
        /// The copy-mode byte.
        mode: u8,
    },
}

/// A client-to-server message that is rejected.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageError {
    /// The message is shorter than its fixed head.
    #[error("message of {len} bytes is shorter than its {needed}-byte head")]
    TooShort {
        /// Bytes received.
        len: usize,
        /// Bytes of a message head.
        needed: usize,
    },
    /// The message was longer than the receive limit; the kernel discarded its tail.
    #[error("message longer than the {max}-byte limit")]
    Oversized {
        /// The largest accepted message.
        max: usize,
    },
    /// The version byte is not one this crate speaks.
    #[error("unsupported message version {0}")]
    UnsupportedVersion(u8),
    /// The payload kind byte is unknown.
    #[error("unknown payload kind {0}")]
    UnknownKind(u8),
    /// The reserved field is not zero.
    #[error("reserved field is {0:#06x}, expected 0")]
    ReservedNotZero(u16),
    /// The module tag field is invalid.
    #[error("bad module tag")]
    Module(#[source] TagError),
    /// The file name field is invalid.
    #[error("bad file name")]
    File(#[source] TagError),
    /// The bytes after the head are not what the head calls for: the inline payload's length for an inline
    /// message, nothing for a memfd message, a device region for a device-memory message.
    #[error("head calls for {claimed} bytes after it, message carries {actual}")]
    LengthMismatch {
        /// Bytes the head calls for.
        claimed: u32,
        /// Bytes that followed the head.
        actual: usize,
    },
    /// The claimed payload is larger than the server accepts.
    #[error("payload of {len} bytes exceeds the {max}-byte limit")]
    PayloadTooLarge {
        /// Claimed length.
        len: u32,
        /// The limit.
        max: u32,
    },
    /// Descriptors arrived that the message kind does not use, or more than one.
    #[error("{count} unexpected file descriptors attached")]
    UnexpectedFds {
        /// How many arrived.
        count: usize,
    },
    /// Descriptors were attached but did not all fit the receive buffer (`MSG_CTRUNC`).
    #[error("attached file descriptors were truncated")]
    FdsTruncated,
    /// A memfd message arrived without its descriptor.
    #[error("memfd message carries no file descriptor")]
    MissingFd,
}

/// A server acknowledgement that cannot be decoded.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AckError {
    /// The datagram is not the size of an acknowledgement.
    #[error("acknowledgement of {len} bytes, expected {expected}")]
    Length {
        /// Bytes received.
        len: usize,
        /// Bytes of an acknowledgement.
        expected: usize,
    },
    /// The version byte is not one this crate speaks.
    #[error("unsupported acknowledgement version {0}")]
    UnsupportedVersion(u8),
    /// The reserved byte is not zero.
    #[error("reserved byte is {0:#04x}, expected 0")]
    ReservedNotZero(u8),
    /// The status (and reason) name no outcome this crate knows.
    #[error("unknown status {status} (reason {reason})")]
    UnknownStatus {
        /// The status byte.
        status: u8,
        /// The reason byte.
        reason: u8,
    },
    /// The acknowledgement answers a record the client has not sent yet.
    #[error("acknowledgement of record {found} while waiting for record {expected}")]
    Unexpected {
        /// The record the client waits for.
        expected: u64,
        /// The record the acknowledgement names.
        found: u64,
    },
}

/// A device pointer that a client cannot record.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceError {
    /// This process cannot use the CUDA driver.
    #[error("no CUDA in this process")]
    NoCuda(#[source] Unavailable),
    /// The pointer is not GPU device memory the driver knows (a host pointer, a freed allocation, garbage).
    #[error("{ptr:#x} is not CUDA device memory")]
    NotDeviceMemory {
        /// The pointer.
        ptr: u64,
    },
    /// The bytes reach past the end of their allocation.
    #[error("{len} bytes at offset {offset} reach past the end of a {size}-byte allocation")]
    OutsideAllocation {
        /// Where the bytes start inside the allocation.
        offset: u64,
        /// How many were asked for.
        len: u64,
        /// The allocation's size.
        size: u64,
    },
    /// The calling thread has no current CUDA context and no GPU's primary context is active in this
    /// process, so the driver cannot be asked about the pointer (it would answer
    /// `CUDA_ERROR_INVALID_CONTEXT`): make a context current on this thread first.
    #[error("no CUDA context is current on this thread and no GPU's primary context is active")]
    NoContext,
    /// More bytes than a record can hold (`u32::MAX`).
    #[error("{len} bytes exceed the largest record")]
    TooLong {
        /// How many were asked for.
        len: usize,
    },
    /// A driver call failed.
    #[error("{call} failed with CUresult {code}")]
    Cuda {
        /// The driver function.
        call: &'static str,
        /// Its `CUresult`.
        code: u32,
    },
}

/// A received payload memfd that is rejected before it is mapped.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum MemfdError {
    /// The descriptor's seals cannot be read: it is not a memfd (or another sealable file).
    #[error("descriptor is not a sealable memfd")]
    NotMemfd(#[source] io::Error),
    /// Required seals are missing, so the sender could still shrink or change it while it is copied.
    #[error("memfd lacks seals {missing:#x} (has {present:#x})")]
    NotSealed {
        /// The `F_SEAL_*` bits present.
        present: i32,
        /// The required bits that are absent.
        missing: i32,
    },
    /// The memfd's size cannot be read.
    #[error("cannot read the memfd size")]
    Stat(#[source] io::Error),
    /// The memfd is smaller than the payload length the head claims.
    #[error("memfd holds {size} bytes, head claims {claimed}")]
    TooSmall {
        /// Size of the memfd.
        size: u64,
        /// Length in the head.
        claimed: u32,
    },
    /// Mapping the memfd failed.
    #[error("cannot map the memfd")]
    Map(#[source] io::Error),
}

/// A ring operation that cannot be done.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RingError {
    /// The capacity cannot hold even one empty record.
    #[error("capacity {capacity} is below the {min}-byte minimum")]
    CapacityTooSmall {
        /// Requested capacity.
        capacity: usize,
        /// Smallest capacity allowed (one record head).
        min: usize,
    },
    /// The memory for the ring cannot be allocated.
    #[error("cannot allocate {capacity} bytes for the ring")]
    Alloc {
        /// Requested capacity.
        capacity: usize,
    },
    /// A record (head and payload) is larger than the whole ring.
    #[error("record of {size} bytes exceeds the ring capacity of {capacity}")]
    RecordTooLarge {
        /// Head plus payload bytes.
        size: u64,
        /// Ring capacity.
        capacity: usize,
    },
}

/// A ring file that cannot be written or read back.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RingFileError {
    /// Reading or writing the file failed.
    #[error("ring file I/O failed")]
    Io(#[from] io::Error),
    /// The file does not start with the ring file magic.
    #[error("not a lizard-trace ring file (bad magic)")]
    BadMagic,
    /// The file's format version is not one this crate reads.
    #[error("unsupported ring file version {0}")]
    UnsupportedVersion(u32),
    /// The file's record head size is not the one its version has.
    #[error("record head size {found} in file, its version has {expected}")]
    HeadSize {
        /// The size in the file.
        found: u32,
        /// The size of its version's heads.
        expected: u32,
    },
    /// The capacity in the file exceeds the limit the caller set.
    #[error("ring capacity {capacity} exceeds the load limit {max}")]
    CapacityTooLarge {
        /// Capacity in the file.
        capacity: u64,
        /// The limit.
        max: u64,
    },
    /// The ring described by the file cannot be created.
    #[error("cannot create the ring")]
    Ring(#[source] RingError),
    /// The file ended inside the directory or a record.
    #[error("file ends inside {what}")]
    Truncated {
        /// The part being read.
        what: &'static str,
    },
    /// A record head is invalid.
    #[error("record {index}: bad head")]
    Head {
        /// Position of the record, oldest first.
        index: u64,
        /// Why.
        #[source]
        source: HeadError,
    },
    /// A record's sequence number is not the one its position implies.
    #[error("record {index}: sequence {found}, expected {expected}")]
    Sequence {
        /// Position of the record, oldest first.
        index: u64,
        /// Sequence number implied by the directory.
        expected: u64,
        /// Sequence number in the head.
        found: u64,
    },
    /// A client account of the ledger is invalid: beyond the most accounts a ledger holds, out of pid order,
    /// or with more records overwritten than stored.
    #[error("client account {index}: invalid (too many accounts, pids out of order or counts that disagree)")]
    Ledger {
        /// Position of the account (or the count, when there are too many).
        index: u64,
    },
    /// The records do not fit the capacity.
    #[error("records need more than the capacity of {capacity} bytes")]
    Overfull {
        /// Capacity in the file.
        capacity: u64,
    },
    /// The directory disagrees with itself or with the records.
    #[error("directory inconsistent: {field} is {found}, records imply {expected}")]
    Directory {
        /// The directory field.
        field: &'static str,
        /// Value in the directory.
        found: u64,
        /// Value implied by the other fields and the records.
        expected: u64,
    },
    /// Bytes follow the last record.
    #[error("unexpected bytes after the last record")]
    TrailingBytes,
}

/// A client operation that failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server could not be reached.
    #[error("cannot connect to trace server {name}")]
    Connect {
        /// Where the client tried to connect.
        name: SocketName,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The module tag does not fit its 10-byte field.
    #[error("bad module tag")]
    Module(#[source] TagError),
    /// The payload is longer than a record can describe (`u32::MAX`).
    #[error("payload of {len} bytes exceeds the {max}-byte limit")]
    PayloadTooLarge {
        /// Payload length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The inline threshold exceeds what one message may carry.
    #[error("inline threshold {threshold} exceeds the {max}-byte message limit")]
    InlineThreshold {
        /// Requested threshold.
        threshold: usize,
        /// Largest inline payload.
        max: usize,
    },
    /// The payload memfd could not be created, filled or sealed.
    #[error("cannot prepare the payload memfd")]
    Memfd(#[source] io::Error),
    /// Sending failed for a reason other than a full queue or a closed server.
    #[error("send failed")]
    Send(#[source] io::Error),
    /// The server closed the connection; the record was dropped and the next record reconnects.
    #[error("trace server closed the connection")]
    Disconnected(#[source] io::Error),
    /// The device memory cannot be recorded from this process.
    #[error("cannot record device memory")]
    Device(#[source] DeviceError),
    /// The server refused the record and said why.
    #[error("trace server refused record {client_seq}")]
    Refused {
        /// The record's client sequence number.
        client_seq: u64,
        /// Why.
        #[source]
        refusal: Refusal,
    },
    /// No acknowledgement came within the deadline: the server may still store the record (and copy its bytes
    /// later than the call).
    #[error("no acknowledgement of record {client_seq} within {waited:?}: it may still be stored")]
    AckTimeout {
        /// The record's client sequence number.
        client_seq: u64,
        /// How long the client waited.
        waited: Duration,
    },
    /// The server's acknowledgement did not decode.
    #[error("bad acknowledgement from the trace server")]
    BadAck(#[source] AckError),
    /// Waiting for the acknowledgement failed.
    #[error("receiving the acknowledgement failed")]
    Receive(#[source] io::Error),
}

/// A server that cannot start.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The ring cannot be created.
    #[error("cannot create the ring")]
    Ring(#[from] RingError),
    /// The name is empty or longer than a UNIX socket address holds.
    #[error("socket name {name} is empty or longer than {max} bytes")]
    BadName {
        /// The name.
        name: SocketName,
        /// The longest name allowed.
        max: usize,
    },
    /// Another live server already listens on the name.
    #[error("trace server already listening on {0}")]
    InUse(SocketName),
    /// Binding or listening failed.
    #[error("cannot listen on {name}")]
    Listen {
        /// The name.
        name: SocketName,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The wake-up channel or the server thread could not be created.
    #[error("cannot start the server thread")]
    Thread(#[source] io::Error),
    /// The server thread did not say within a minute whether it can copy device memory (the CUDA driver did
    /// not answer); the thread was told to stop.
    #[error("the CUDA driver did not answer within {0:?} while the server started")]
    DeviceProbe(Duration),
}
