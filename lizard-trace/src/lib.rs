#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod ack;
pub mod ack_wait;
pub mod client;
pub mod clock;
#[cfg(feature = "cuda")]
mod cuda;
pub mod device;
pub mod device_support;
pub mod error;
pub mod handle_cache;
pub mod head;
pub mod ledger;
mod mapped_file;
pub mod memfd;
pub mod message;
pub mod ring;
#[cfg(feature = "serde")]
pub mod ring_dump;
pub mod ring_file;
mod ring_memory;
pub mod server;
pub mod shared_ring;
pub mod socket_name;
mod summary;
mod sys;
pub mod tag;
pub mod transport;

pub use ack::{Ack, Outcome, Refusal};
pub use ack_wait::AckWait;
pub use client::{ClientConfig, ClientStats, Delivery, DeviceMode, SendPolicy, TraceClient};
pub use clock::monotonic_raw_ns;
pub use device::{CopyMode, DeviceRegion, DeviceUuid, IpcHandle};
pub use device_support::{DeviceSupport, Unavailable};
pub use error::{
    AckError, ClientError, DeviceError, HeadError, MemfdError, MessageError, RingError,
    RingFileError, ServerError, TagError,
};
pub use head::{Origin, RecordHead, RecordMeta, HEAD_LEN};
pub use ledger::{ClientAccount, ClientLedger};
pub use ring::{Directory, Record, Since, TraceRing};
pub use server::{
    DeviceConfig, HandleLimits, HandleStats, PeerPolicy, Rejections, ServerConfig, ServerStats,
    TraceServer,
};
pub use socket_name::SocketName;
pub use tag::{FileTag, ModuleTag};
