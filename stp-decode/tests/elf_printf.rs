//! printf messages decoded with format strings read from real ELF files: two small C programs compiled here
//! with the machine's `gcc` (one for the DSPs, one for an Arm core, as `--elf` and `--elf MASTER=FILE`
//! give them), their format strings' addresses taken from their symbol tables, sent as an STM fed by
//! STMLib would (`tests/common/stm_model.rs`), and decoded by the report. Without gcc the test says it
//! skips. Needs the `elf` feature.
#![cfg(feature = "elf")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::stm_model::{Model, Msg};
use stp_decode::dict::Dictionary;
use stp_decode::dump::Framing;
use stp_decode::elf::{ElfError, ElfImage, ElfImages};
use stp_decode::message::{MessageKind, Undecodable};
use stp_decode::report::{Report, ReportConfig, ReportEvent};
use stp_decode::stmlib::{message_words, Protocol};

/// Compiles `source` into an executable in a scratch folder; `None` (a printed skip) without gcc.
fn compile(name: &str, source: &str) -> Option<PathBuf> {
    let dir = std::env::temp_dir().join(format!("stp-decode-elf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&c, source).unwrap();
    // Not position independent: the strings' addresses are the ones in the symbol table, below 4 GiB.
    let output = Command::new("gcc")
        .arg("-O0")
        .arg("-no-pie")
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .output();
    match output {
        Err(e) => {
            test_data::skip!(
                test_data::Fixture::Cc,
                "no gcc to compile the test programs ({e})"
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

const DSP_PROGRAM: &str = r#"
const char fmt_frame[] = "frame %u took %d us";
const char fmt_wide[] = "total %llu bytes, load %.1f%%";
const char fmt_named[] = "%s is %s";
const char name_dsp[] = "DSP";
const char state_ready[] = "ready";
int main(void) { return fmt_frame[0] + fmt_wide[0] + fmt_named[0] + name_dsp[0] + state_ready[0] - 5 * 'f'; }
"#;

const ARM_PROGRAM: &str = r#"
const char arm_padding[64] = "these bytes move the Arm format string away from the DSP one";
const char fmt_arm[] = "arm says %x";
int main(void) { return arm_padding[0] + fmt_arm[0]; }
"#;

fn address(image: &ElfImage<'_>, symbol: &str) -> u32 {
    let a = image
        .symbol(symbol)
        .unwrap_or_else(|| panic!("{symbol} in the symbol table"));
    u32::try_from(a).expect("a non-PIE executable's data is below 4 GiB")
}

fn printf(address: u32, args: &[u32]) -> Vec<u32> {
    let mut payload = vec![address];
    payload.extend_from_slice(args);
    let bytes: Vec<u8> = payload.iter().flat_map(|w| w.to_le_bytes()).collect();
    message_words(Protocol::Printf, &bytes)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn format_strings_come_from_the_images_at_their_symbol_addresses() {
    let (Some(dsp_exe), Some(arm_exe)) = (compile("dsp", DSP_PROGRAM), compile("arm", ARM_PROGRAM))
    else {
        return;
    };
    let (dsp_bytes, arm_bytes) = (read(&dsp_exe), read(&arm_exe));
    let dsp = ElfImage::parse(&dsp_bytes).unwrap();
    let arm = ElfImage::parse(&arm_bytes).unwrap();
    let load = 37.5f64.to_bits();
    let total: u64 = 5_000_000_000;
    let messages = vec![
        Msg {
            master: 3,
            channel: 1,
            words: printf(address(&dsp, "fmt_frame"), &[12, (-4i32) as u32]),
            ts: 100,
        },
        Msg {
            master: 0,
            channel: 2,
            words: printf(
                address(&dsp, "fmt_wide"),
                &[
                    (total >> 32) as u32,
                    total as u32,
                    (load >> 32) as u32,
                    load as u32,
                ],
            ),
            ts: 200,
        },
        Msg {
            master: 1,
            channel: 2,
            words: printf(
                address(&dsp, "fmt_named"),
                &[address(&dsp, "name_dsp"), address(&dsp, "state_ready")],
            ),
            ts: 300,
        },
        Msg {
            master: 8,
            channel: 0,
            words: printf(address(&arm, "fmt_arm"), &[0xbeef]),
            ts: 400,
        },
        // The Arm image has no DSP strings: an address of the DSP image is outside it, or another string.
        Msg {
            master: 8,
            channel: 0,
            words: printf(address(&dsp, "fmt_frame") + 0x1000_0000, &[1, 2]),
            ts: 500,
        },
    ];
    let order: Vec<usize> = messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| std::iter::repeat_n(i, m.words.len()))
        .collect();
    let mut model = Model::new(1_000);
    model.send(&messages, &order);
    let stream = model.bytes();

    let mut images = ElfImages::new();
    images.set_default(dsp);
    images.set_master(8, arm);
    let dict = Dictionary::new();
    let mut report = Report::new(ReportConfig::new(Framing::Raw, 0), &images, &dict);
    let mut seen = Vec::new();
    let mut sink = |e: &ReportEvent<'_>| -> Result<(), ()> {
        if let ReportEvent::Message { message, .. } = e {
            seen.push((message.master, message.text.to_owned(), message.kind));
        }
        Ok(())
    };
    report.feed(&stream, &mut sink).unwrap();
    let stats = report.finish(&mut sink).unwrap();
    let texts: Vec<&str> = seen.iter().map(|s| s.1.as_str()).collect();
    assert_eq!(
        &texts[..4],
        [
            "frame 12 took -4 us",
            "total 5000000000 bytes, load 37.5%",
            "DSP is ready",
            "arm says beef",
        ]
    );
    assert!(matches!(
        seen[4].2,
        MessageKind::Undecodable {
            reason: Undecodable::AddressOutside { .. },
            ..
        }
    ));
    assert_eq!(stats.stream.messages, 5);
    assert_eq!(stats.stream.undecodable, 1);
}

#[test]
fn files_that_are_not_elf_images_are_refused() {
    assert!(matches!(
        ElfImage::parse(b"#!/bin/sh\necho\n"),
        Err(ElfError::Parse(_))
    ));
    let Some(exe) = compile("tiny", "int main(void) { return 0; }\n") else {
        return;
    };
    let mut bytes = read(&exe);
    assert!(ElfImage::parse(&bytes).is_ok());
    bytes.truncate(40); // the ELF header cut short
    assert!(matches!(ElfImage::parse(&bytes), Err(ElfError::Parse(_))));
    // A relocatable object: its sections are not loaded at addresses yet.
    let object = exe.with_extension("o");
    let status = Command::new("gcc")
        .args(["-c", "-o"])
        .arg(&object)
        .arg(exe.with_extension("c"))
        .status()
        .unwrap();
    assert!(status.success());
    assert!(matches!(
        ElfImage::parse(&read(&object)),
        Err(ElfError::NoSections)
    ));
}
