#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod client;
pub mod clock;
pub mod error;
pub mod head;
pub mod ledger;
pub mod memfd;
pub mod message;
pub mod ring;
pub mod ring_file;
pub mod server;
pub mod socket_name;
mod sys;
pub mod tag;
pub mod transport;

pub use client::{ClientConfig, ClientStats, Delivery, SendPolicy, TraceClient};
pub use clock::monotonic_raw_ns;
pub use error::{
    ClientError, HeadError, MemfdError, MessageError, RingError, RingFileError, ServerError,
    TagError,
};
pub use head::{RecordHead, RecordMeta, HEAD_LEN};
pub use ledger::{ClientAccount, ClientLedger};
pub use ring::{Directory, Record, Since, TraceRing};
pub use server::{PeerPolicy, Rejections, ServerConfig, ServerStats, TraceServer};
pub use socket_name::SocketName;
pub use tag::{FileTag, ModuleTag};
