//! Fuzzes `stp-decode`'s message layer: the assembler driven by arbitrary sequences of data packets, flags,
//! losses and ends of trace on a few masters and channels, every message decoded (STMLib headers, printf
//! with format strings of every conversion, values named by a dictionary); then the whole report over the
//! same input taken as an STP stream. No panic; every data packet ends in exactly one message or torn
//! piece; the report's statistics agree with its events.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use stp_decode::dict::Dictionary;
use stp_decode::dump::Framing;
use stp_decode::message::{
    Assembled, Assembler, AssemblerConfig, MessageDecoder, StringTable, TearCause,
};
use stp_decode::report::{Report, ReportConfig, ReportEvent};
use stp_decode::DataWidth;

#[derive(Debug, Arbitrary)]
enum Op {
    Data {
        master: u8,
        channel: u8,
        width: u8,
        value: u64,
        marker: bool,
        ts: Option<u64>,
    },
    Header {
        master: u8,
        channel: u8,
        protocol: u8,
        count: u8,
    },
    Flag {
        master: u8,
        channel: u8,
    },
    Lose {
        master: Option<u8>,
    },
    Finish,
}

fuzz_target!(|input: (Vec<Op>, Vec<u8>)| {
    let (ops, stream) = input;
    let mut strings = StringTable::default();
    strings.insert(0x100, "%d %u %x %5.2f %lld %s %c %% %-8s|%*d");
    strings.insert(0x200, "%hhd %hu %#o %e %g %p %.3s %n");
    strings.insert(0x300, "plain");
    let mut dict = Dictionary::new();
    dict.insert_value(None, 1, 7, "SEVEN");
    let mut assembler = Assembler::new(AssemblerConfig::default());
    let mut decoder = MessageDecoder::new();
    let (mut packets_in, mut packets_out) = (0u64, 0u64);
    let mut torn_packets = 0u64;
    for op in &ops {
        let (master, channel) = match *op {
            Op::Data {
                master, channel, ..
            }
            | Op::Header {
                master, channel, ..
            }
            | Op::Flag { master, channel } => (u16::from(master % 4), u16::from(channel % 3)),
            _ => (0, 0),
        };
        let assembled = match *op {
            Op::Data {
                width,
                value,
                marker,
                ts,
                ..
            } => {
                packets_in += 1;
                let width = [
                    DataWidth::W4,
                    DataWidth::W8,
                    DataWidth::W16,
                    DataWidth::W32,
                    DataWidth::W64,
                ][usize::from(width % 5)];
                assembler.data(0, master, channel, width, value & width.mask(), marker, ts)
            }
            Op::Header {
                protocol, count, ..
            } => {
                packets_in += 1;
                let word = 0x0101_0000 | (u32::from(0x80 | (protocol % 6)) << 8) | u32::from(count);
                assembler.data(0, master, channel, DataWidth::W32, word.into(), false, None)
            }
            Op::Flag { .. } => assembler.flag(master, channel),
            Op::Lose { master } => {
                assembler.lose(
                    master.map(|m| u16::from(m % 4)),
                    TearCause::SyncLost,
                    &mut |t| torn_packets += u64::from(t.packets),
                );
                None
            }
            Op::Finish => {
                assembler.finish(&mut |t| torn_packets += u64::from(t.packets));
                None
            }
        };
        match assembled {
            Some(Assembled::Message(raw)) => {
                packets_out += u64::from(raw.packets);
                let message = decoder.decode(&raw, &strings, &dict);
                assert_eq!(
                    message.bytes.len() + raw.dropped as usize,
                    raw.widths.iter().map(|&w| usize::from(w)).sum::<usize>()
                        + raw.dropped as usize
                );
                let _ = message.text.len();
            }
            Some(Assembled::Torn(t)) => torn_packets += u64::from(t.packets),
            None => {}
        }
    }
    assembler.finish(&mut |t| torn_packets += u64::from(t.packets));
    assert_eq!(
        packets_in,
        packets_out + torn_packets,
        "every packet accounted for"
    );

    // The whole report over the bytes as a raw STP stream (an ASYNC first, so that it decodes).
    let mut bytes = vec![0xFF; 10];
    bytes.extend([0x0F, 0x0F, 0x30]);
    bytes.extend(&stream);
    let mut config = ReportConfig::new(Framing::Raw, 0);
    config.spans = vec!["s=plain..SEVEN".parse().unwrap()];
    let mut report = Report::new(config, &strings, &dict);
    let mut messages = 0u64;
    let mut sink = |e: &ReportEvent<'_>| -> Result<(), ()> {
        if let ReportEvent::Message { .. } = e {
            messages += 1;
        }
        Ok(())
    };
    let split = stream.len() / 2;
    report.feed(&bytes[..split], &mut sink).unwrap();
    report.feed(&bytes[split..], &mut sink).unwrap();
    let stats = report.finish(&mut sink).unwrap();
    assert_eq!(stats.stream.messages, messages);
    let per_master: u64 = stats.masters.iter().map(|m| m.data_packets).sum();
    assert_eq!(
        per_master + stats.stream.unattributed_packets,
        stats.stream.data_packets
    );
    let _ = stats.to_string();
});
