//! `lizard stm-report` on KeyStone II trace buffers built here: an STM fed by STMLib
//! (`stp-decode/tests/common/stm_model.rs`) writing printf messages whose format strings are in a C program
//! compiled with the machine's gcc (their real addresses from its symbol table), putMsg messages and values
//! named by a dictionary, in TWP frames, in a trace buffer that wrapped. The dump is read as TI's tools save
//! it (in order, with its `.dcm`) and raw with its write pointer; the Perfetto timeline is decoded with
//! Perfetto's own `perfetto_trace_pb2` (perfetto-writer's `tools/decode_trace.py`) and checked against the JSON
//! statistics; every kind of bad input gets its reason and exit status. Without gcc or Perfetto's Python
//! module the parts that need them say they skip.

mod common;

#[path = "../../stp-decode/tests/common/stm_model.rs"]
mod stm_model;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{decode_trace, lizard, stderr, stdout};
use serde_json::Value;
use stm_model::{frames, wrap, Model, Msg};
use stp_decode::dcm::Dcm;
use stp_decode::elf::ElfImage;
use stp_decode::stmlib::{message_words, Protocol};
use stp_decode::tbr::{ordered, Wrap};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-stm-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const PROGRAM: &str = r#"
const char fmt_start[] = "frame %u start";
const char fmt_end[] = "frame %u end, %d us late";
int main(void) { return fmt_start[0] + fmt_end[0] - 2 * 'f'; }
"#;

/// The C program compiled in `dir`, or `None` (a printed skip) without gcc.
fn program(dir: &Path) -> Option<PathBuf> {
    let c = dir.join("app.c");
    let exe = dir.join("app");
    std::fs::write(&c, PROGRAM).unwrap();
    match Command::new("gcc")
        .args(["-O0", "-no-pie", "-o"])
        .arg(&exe)
        .arg(&c)
        .output()
    {
        Err(e) => {
            test_data::skip!(
                test_data::Fixture::Cc,
                "no gcc to compile the test program ({e})"
            );
            None
        }
        Ok(o) => {
            assert!(
                o.status.success(),
                "gcc: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            Some(exe)
        }
    }
}

fn printf(address: u32, args: &[u32]) -> Vec<u32> {
    let mut payload = vec![address];
    payload.extend_from_slice(args);
    let bytes: Vec<u8> = payload.iter().flat_map(|w| w.to_le_bytes()).collect();
    message_words(Protocol::Printf, &bytes)
}

/// A dump: DSP0–3 each logging 40 frames (start, a state value, end 1,000·(n+1) ticks after the start),
/// Arm0 putMsg lines; wrapped in a 2,048-word buffer. Returns the raw buffer, its write pointer, and the messages.
fn dump(exe: &Path) -> (Vec<u8>, u32, Vec<Msg>) {
    let bytes = std::fs::read(exe).unwrap();
    let image = ElfImage::parse(&bytes).unwrap();
    let start = image.symbol("fmt_start").unwrap() as u32;
    let end = image.symbol("fmt_end").unwrap() as u32;
    let mut messages = Vec::new();
    for frame in 0..40u32 {
        let base = 10_000 + 5_000 * u64::from(frame);
        for dsp in 0..4u16 {
            let start_ts = base + 250 * u64::from(dsp);
            messages.push(Msg {
                master: dsp,
                channel: 1,
                words: printf(start, &[frame]),
                ts: start_ts,
            });
            messages.push(Msg {
                master: dsp,
                channel: 7,
                words: vec![frame, 0x2],
                ts: start_ts + 50,
            });
            messages.push(Msg {
                master: dsp,
                channel: 1,
                words: printf(end, &[frame, (dsp as i32 - 2) as u32]),
                ts: start_ts + 1_000 * u64::from(dsp + 1),
            });
        }
        messages.push(Msg {
            master: 8,
            channel: 3,
            words: message_words(Protocol::PutMsg, format!("arm tick {frame}").as_bytes()),
            ts: base + 10,
        });
    }
    // Written in time order (the stp-decode tests interleave words of different channels).
    messages.sort_by_key(|m| m.ts);
    let order: Vec<usize> = messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| std::iter::repeat_n(i, m.words.len()))
        .collect();
    let mut model = Model::new(2_000);
    model.send(&messages, &order);
    let (formatted, _) = frames(&model.bytes());
    let (memory, write_pointer) = wrap(&formatted[..formatted.len() - 8], 2048);
    (memory, write_pointer, messages)
}

/// Runs `lizard args`; returns the output.
fn run(args: &[&str]) -> std::process::Output {
    lizard(args)
}

fn ok(args: &[&str]) -> String {
    let output = run(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    stdout(&output)
}

#[test]
fn a_keystone_dump_and_its_elf_open_as_a_timeline_of_readable_messages() {
    let dir = scratch("timeline");
    let Some(exe) = program(&dir) else {
        return;
    };
    let (memory, write_pointer, _) = dump(&exe);
    let raw_path = dir.join("tbr.bin");
    std::fs::write(&raw_path, &memory).unwrap();
    // As TI's tools save it: in order from the oldest word, with the sidecar.
    let saved = ordered(&memory, Wrap::Wrapped { write_pointer }).unwrap();
    let dump_path = dir.join("stm.bin");
    std::fs::write(&dump_path, saved.parts.concat()).unwrap();
    let dcm_path = dir.join("stm.dcm");
    std::fs::write(&dcm_path, Dcm::stpv2(true).to_string()).unwrap();
    let dict_path = dir.join("states.dict");
    std::fs::write(
        &dict_path,
        "# states\nvalue 7 2 RUNNING\nchannel 7 state\nchannel 1 log\n",
    )
    .unwrap();
    let trace = dir.join("stm.pftrace");
    let (dump_s, dcm_s, exe_s, dict_s, trace_s) = (
        dump_path.to_str().unwrap(),
        dcm_path.to_str().unwrap(),
        exe.to_str().unwrap(),
        dict_path.to_str().unwrap(),
        trace.to_str().unwrap(),
    );
    let json = ok(&[
        "stm-report",
        dump_s,
        "--dcm",
        dcm_s,
        "--device",
        "k2h",
        "--elf",
        exe_s,
        "--dict",
        dict_s,
        "--span",
        "frame=start..end",
        "--perfetto",
        trace_s,
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let stats = &doc["stats"];
    assert_eq!(stats["time_unit"], "ns");
    assert_eq!(stats["clock"]["source"], "freq_packet");
    assert_eq!(stats["stream"]["undecodable"], 0, "{stats}");
    assert!(stats["stream"]["partial_frame_bytes"].as_u64().unwrap() < 16);
    let messages = stats["stream"]["messages"].as_u64().unwrap();
    assert!(messages > 50, "{messages}");
    // The statistics agree with themselves: masters add up to the stream, channels to their master.
    let masters = stats["masters"].as_array().unwrap();
    let sum = |key: &str| {
        masters
            .iter()
            .map(|m| m[key].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(sum("messages"), messages);
    for m in masters {
        let channels: u64 = m["channels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["messages"].as_u64().unwrap())
            .sum();
        assert_eq!(channels, m["messages"].as_u64().unwrap());
    }
    let names: Vec<&str> = masters
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"DSP3") && names.contains(&"Arm0"),
        "{names:?}"
    );
    let span = &stats["spans"][0];
    assert!(span["count"].as_u64().unwrap() > 10);
    // DSP n ends its frames 1000·(n+1) ticks after it starts them, at 250 MHz: 4 µs to 16 µs.
    assert_eq!(span["min"], 4_000);
    assert_eq!(span["max"], 16_000);
    let hist: u64 = span["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(hist, span["count"].as_u64().unwrap());

    // The raw circular buffer with its write pointer gives the same messages.
    let wp = write_pointer.to_string();
    let lines = |args: &[&str]| -> Vec<String> {
        ok(args)
            .lines()
            .take_while(|l| !l.starts_with("clock:"))
            .map(str::to_owned)
            .collect()
    };
    let from_raw = lines(&[
        "stm-report",
        raw_path.to_str().unwrap(),
        "--wrapped",
        "--write-pointer",
        &wp,
        "--trace-id",
        "0x40",
        "--device",
        "k2h",
        "--elf",
        exe_s,
        "--dict",
        dict_s,
        "--messages",
    ]);
    let from_dump = lines(&[
        "stm-report",
        dump_s,
        "--dcm",
        dcm_s,
        "--device",
        "k2h",
        "--elf",
        exe_s,
        "--dict",
        dict_s,
        "--messages",
    ]);
    assert_eq!(from_raw, from_dump);
    assert_eq!(from_raw.len() as u64, messages);
    assert!(
        from_raw
            .iter()
            .any(|l| l.contains("DSP2") && l.contains("end, 0 us late")),
        "{from_raw:?}"
    );
    assert!(
        from_raw.iter().any(|l| l.ends_with("RUNNING")),
        "{from_raw:?}"
    );
    assert!(from_raw
        .iter()
        .any(|l| l.contains("Arm0") && l.contains("arm tick")));

    // Without --trace-id the wrapped buffer's TWP frames are found from its bytes, and said so.
    let found = run(&[
        "stm-report",
        raw_path.to_str().unwrap(),
        "--wrapped",
        "--write-pointer",
        &wp,
        "--device",
        "k2h",
        "--elf",
        exe_s,
        "--dict",
        dict_s,
        "--messages",
    ]);
    assert!(found.status.success(), "{}", stderr(&found));
    assert!(
        stderr(&found).contains("holds TWP / CoreSight frames (trace IDs: 0x40"),
        "{}",
        stderr(&found)
    );
    let found_lines: Vec<String> = stdout(&found)
        .lines()
        .take_while(|l| !l.starts_with("clock:"))
        .map(str::to_owned)
        .collect();
    assert_eq!(found_lines, from_raw);
    // Read as bare STP on purpose, nothing is found: exit 4, with what to pass.
    let bare = run(&[
        "stm-report",
        raw_path.to_str().unwrap(),
        "--wrapped",
        "--write-pointer",
        &wp,
        "--bare",
    ]);
    assert_eq!(bare.status.code(), Some(4), "{}", stderr(&bare));
    assert!(
        stderr(&bare).contains("--dcm or --trace-id"),
        "{}",
        stderr(&bare)
    );

    // The messages as JSON, one object each in the document, the same as the lines; written with -o.
    let report = dir.join("report.json");
    let quiet = ok(&[
        "stm-report",
        dump_s,
        "--dcm",
        dcm_s,
        "--device",
        "k2h",
        "--elf",
        exe_s,
        "--dict",
        dict_s,
        "--messages",
        "--format",
        "json",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert_eq!(quiet, "", "the report went to the file");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let listed = doc["messages"].as_array().unwrap();
    assert_eq!(listed.len() as u64, messages);
    assert_eq!(doc["stats"]["stream"]["messages"].as_u64(), Some(messages));
    for (entry, line) in listed.iter().zip(&from_dump) {
        let text = entry["text"].as_str().unwrap();
        assert!(line.ends_with(text), "{line} / {entry}");
        assert!(
            line.contains(entry["master_name"].as_str().unwrap()),
            "{line} / {entry}"
        );
        assert!(
            entry["time"].is_u64() && entry["channel"].is_u64(),
            "{entry}"
        );
        assert!(["stmlib", "values", "undecodable"].contains(&entry["kind"].as_str().unwrap()));
    }

    // Perfetto's own module reads the timeline: a track per master, per channel under it, the messages'
    // text as instants, the spans as slices.
    let Some(t) = decode_trace(&trace) else {
        return;
    };
    assert_eq!(t["packets_with_unknown_fields"], serde_json::json!([]));
    let tracks = t["tracks"].as_object().unwrap();
    let uuid_of = |name: &str, parent: Option<&str>| -> u64 {
        tracks
            .iter()
            .find(|(_, tr)| {
                tr["name"] == name
                    && parent.is_none_or(|p| {
                        tr["parent"]
                            .as_u64()
                            .and_then(|u| tracks.get(&u.to_string()))
                            .is_some_and(|pt| pt["name"] == p)
                    })
            })
            .map(|(u, _)| u.parse::<u64>().unwrap())
            .unwrap_or_else(|| panic!("no track {name} under {parent:?}: {tracks:?}"))
    };
    let dsp3_log = uuid_of("channel 1 (log)", Some("DSP3"));
    uuid_of("channel 7 (state)", Some("DSP0"));
    let instants = t["instants"].as_array().unwrap();
    let on_dsp3: Vec<&str> = instants
        .iter()
        .filter(|i| i["track"].as_u64() == Some(dsp3_log))
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(
        on_dsp3
            .iter()
            .any(|n| n.starts_with("frame ") && n.ends_with(" start")),
        "{on_dsp3:?}"
    );
    assert!(
        on_dsp3
            .iter()
            .all(|n| n.starts_with("frame ") || n.starts_with("torn")),
        "{on_dsp3:?}"
    );
    let message_instants = instants
        .iter()
        .filter(|i| {
            i["args"].get("master").is_some()
                && i["args"].get("packets").is_some()
                && !i["name"].as_str().unwrap().starts_with("torn")
        })
        .count() as u64;
    assert_eq!(message_instants, messages, "an instant per message");
    // Each message's category is its protocol, or `values` for a message without an STMLib header.
    let frame_start = instants
        .iter()
        .find(|i| {
            let name = i["name"].as_str().unwrap();
            i["track"].as_u64() == Some(dsp3_log)
                && name.starts_with("frame ")
                && name.ends_with(" start")
        })
        .expect("a frame start on DSP3");
    assert_eq!(frame_start["categories"], serde_json::json!(["printf"]));
    assert_eq!(frame_start["args"]["protocol"], "printf");
    assert_eq!(frame_start["args"]["master"], 3);
    assert!(instants
        .iter()
        .any(|i| i["categories"] == serde_json::json!(["values"])));
    let slices = t["slices"].as_array().unwrap();
    assert_eq!(slices.len() as u64, span["count"].as_u64().unwrap());
    let dsp3_span = uuid_of("span frame", Some("DSP3"));
    let dsp3_slices: Vec<&Value> = slices
        .iter()
        .filter(|s| s["track"].as_u64() == Some(dsp3_span))
        .collect();
    assert!(!dsp3_slices.is_empty());
    assert!(dsp3_slices
        .iter()
        .all(|s| s["end"].as_u64().unwrap() - s["begin"].as_u64().unwrap() == 16_000));
    assert!(slices.iter().all(|s| s["name"] == "frame"
        && s["categories"] == serde_json::json!(["span"])
        && s["args"]["duration"] == s["end"].as_u64().unwrap() - s["begin"].as_u64().unwrap()));
}

#[test]
fn every_bad_input_gets_its_reason() {
    let dir = scratch("bad");
    let buffer = dir.join("buffer.bin");
    std::fs::write(&buffer, [0u8; 64]).unwrap();
    let b = buffer.to_str().unwrap();
    let write = |name: &str, text: &str| -> String {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_owned()
    };
    let fails = |args: &[&str], code: i32, says: &str| {
        let output = run(args);
        assert_eq!(
            output.status.code(),
            Some(code),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(says),
            "{args:?}: {}",
            stderr(&output)
        );
    };
    let good = Dcm::stpv2(true).to_string();
    let missing = write("missing.dcm", &good.replace("TWP_Protocol=1\n", ""));
    fails(
        &["stm-report", b, "--dcm", &missing],
        4,
        "TWP_Protocol is missing",
    );
    let stpv1 = write(
        "v1.dcm",
        &good.replace("STM_STP_Version=2", "STM_STP_Version=1"),
    );
    fails(
        &["stm-report", b, "--dcm", &stpv1],
        4,
        "STM_STP_Version=1 is not supported",
    );
    let flipped = write(
        "flip.dcm",
        &good.replace("STM_data_flip=0", "STM_data_flip=1"),
    );
    fails(&["stm-report", b, "--dcm", &flipped], 4, "STM_data_flip=1");
    let text = write("text.dcm", "STM_data_flip=zero\n");
    fails(
        &["stm-report", b, "--dcm", &text],
        4,
        "STM_data_flip is not a decimal number",
    );
    fails(
        &["stm-report", b, "--wrapped", "--write-pointer", "16"],
        4,
        "write pointer 16 is outside the buffer of 16 words",
    );
    fails(&["stm-report", b, "--wrapped"], 2, "--write-pointer");
    fails(
        &["stm-report", b, "--span", "frame"],
        2,
        "the name is missing",
    );
    fails(&["stm-report", b, "--span", "x=a-b"], 2, "'..' is missing");
    let dict = write("bad.dict", "value 5 0x1 ONE\nvalue 5 1 AGAIN\n");
    fails(
        &["stm-report", b, "--dict", &dict],
        4,
        "line 2: the same entry as line 1",
    );
    let layout = write("bad.layout", "bytes 15:0 bytes\n");
    fails(
        &["stm-report", b, "--cptracer-layout", &layout],
        4,
        "no field is marked 'master'",
    );
    fails(
        &["stm-report", b, "--window", "1ms"],
        2,
        "--cptracer-layout",
    );
    let not_elf = write("notelf", "#!/bin/sh\n");
    fails(
        &["stm-report", b, "--elf", &not_elf],
        4,
        "not an object file",
    );
    fails(
        &["stm-report", b, "--hardware-masters", "0x90-0x80"],
        2,
        "FIRST-LAST",
    );
    fails(&["stm-report", b, "--stm-clock", "0"], 2, "not a frequency");
    fails(&["stm-report", &format!("{b}.none")], 4, "buffer.bin.none");
    // Bytes that hold no STP at all: the report that says so, and the failure with the hint.
    let output = run(&["stm-report", b]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("128 nibbles before the first ASYNC"),
        "{}",
        stdout(&output)
    );
    assert!(
        stderr(&output).contains("no STP synchronisation (ASYNC) in 128 nibbles")
            && stderr(&output).contains("--dcm or --trace-id"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_dump_with_nothing_in_its_first_16_mib_is_given_up_on() {
    let dir = scratch("zeros");
    let zeros = dir.join("zeros.bin");
    std::fs::write(&zeros, vec![0u8; 17 << 20]).unwrap();
    let output = run(&["stm-report", zeros.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("nothing in its first 16 MiB")
            && stderr(&output).contains("--dcm or --trace-id"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn frames_of_several_sources_without_the_stm_ask_for_its_trace_id() {
    let dir = scratch("several");
    let path = dir.join("two.bin");
    let mut framed = Vec::new();
    stp_decode::formatter::format_frames(0x10, &[1; 200], &mut framed).unwrap();
    stp_decode::formatter::format_frames(0x20, &[2; 200], &mut framed).unwrap();
    std::fs::write(&path, &framed).unwrap();
    let output = run(&["stm-report", path.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output)
            .contains("frames of several trace IDs (0x10 (200 bytes), 0x20 (200 bytes))")
            && stderr(&output).contains("--trace-id"),
        "{}",
        stderr(&output)
    );
}
