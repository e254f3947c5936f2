//! Input files read under their limits (`lizard-input`): what a user hands a command by mistake
//! (`/dev/zero`, a directory, a FIFO nobody writes to, a file too large, bytes that are not text) ends with a
//! typed error naming the file, in bounded time and memory; pipes read as files do.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lizard_input::{InputError, InputKind, Inputs};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-inputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn mkfifo(path: &std::path::Path) {
    rustix_fifo(path);
}

fn rustix_fifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    let status = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(status, 0, "mkfifo {}", path.display());
}

#[test]
fn dev_zero_is_refused_at_the_limit() {
    let inputs = Inputs::new().with_max_bytes(Some(4 << 20));
    let started = Instant::now();
    let error = inputs
        .read("/dev/zero".as_ref(), InputKind::CaptureDocument)
        .expect_err("endless");
    assert!(
        matches!(
            error,
            InputError::TooLarge {
                limit: 4194304,
                size: None,
                kind: InputKind::CaptureDocument,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let text = error.to_string();
    assert!(
        text.contains("/dev/zero") && text.contains("4 MiB"),
        "{text}"
    );
    assert!(text.contains("--max-input"), "{text}");
}

#[test]
fn a_regular_file_over_the_limit_is_refused_before_it_is_read() {
    let dir = scratch("large");
    let path = dir.join("big.json");
    std::fs::write(&path, vec![b' '; 3000]).expect("file");
    let inputs = Inputs::new().with_max_bytes(Some(2999));
    let error = inputs.read(&path, InputKind::CaptureDocument).unwrap_err();
    assert!(
        matches!(
            error,
            InputError::TooLarge {
                size: Some(3000),
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("2.9 KiB"), "{error}");
    // At exactly the limit it is read.
    let inputs = Inputs::new().with_max_bytes(Some(3000));
    assert_eq!(
        inputs
            .read(&path, InputKind::CaptureDocument)
            .unwrap()
            .len(),
        3000
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_directory_is_refused_as_one() {
    let dir = scratch("dir");
    let error = Inputs::new().read(&dir, InputKind::EventsXml).unwrap_err();
    assert!(
        matches!(
            error,
            InputError::Directory {
                kind: InputKind::EventsXml,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("is a directory, not an events XML file"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_missing_file_and_bad_text_name_the_file() {
    let dir = scratch("text");
    let missing = dir.join("missing.xml");
    let error = Inputs::new()
        .read(&missing, InputKind::EventsXml)
        .unwrap_err();
    assert!(
        matches!(&error, InputError::Open { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    );
    assert_eq!(error.path(), missing);
    let binary = dir.join("binary.txt");
    std::fs::write(&binary, b"name\xff\xfe").expect("file");
    let error = Inputs::new()
        .read_text(&binary, InputKind::TextTable)
        .unwrap_err();
    assert!(
        matches!(error, InputError::NotText { valid_up_to: 4, .. }),
        "{error:?}"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_fifo_without_a_writer_waits_until_stopped() {
    let dir = scratch("fifo-stop");
    let fifo = dir.join("events.xml");
    mkfifo(&fifo);
    static STOP: AtomicBool = AtomicBool::new(false);
    let stop = || STOP.load(Ordering::SeqCst);
    let stopper = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(300));
        STOP.store(true, Ordering::SeqCst);
    });
    let started = Instant::now();
    let error = Inputs::new()
        .stopped_by(&stop)
        .read(&fifo, InputKind::EventsXml)
        .unwrap_err();
    stopper.join().expect("stopper");
    assert!(
        matches!(error, InputError::Stopped { read: 0, .. }),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_fifo_with_a_late_writer_reads_whole() {
    let dir = scratch("fifo-read");
    let fifo = dir.join("doc.json");
    mkfifo(&fifo);
    let writer_path = fifo.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&writer_path)
            .expect("open");
        for _ in 0..100 {
            file.write_all(&[b'x'; 1000]).expect("write");
        }
    });
    let bytes = Inputs::new()
        .read(&fifo, InputKind::CaptureDocument)
        .expect("read");
    writer.join().expect("writer");
    assert_eq!(bytes.len(), 100_000);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_stream_ends_with_the_typed_error_at_its_limit() {
    let inputs = Inputs::new().with_max_bytes(Some(100_000));
    let mut stream = inputs
        .open("/dev/zero".as_ref(), InputKind::FrameFile)
        .expect("open");
    let mut sink = Vec::new();
    let error = stream.read_to_end(&mut sink).unwrap_err();
    assert_eq!(sink.len(), 100_000);
    let input = InputError::from_io(error).expect("an input error");
    assert!(
        matches!(
            input,
            InputError::TooLarge {
                kind: InputKind::FrameFile,
                ..
            }
        ),
        "{input:?}"
    );
    // Other I/O errors come back as they are.
    let other = std::io::Error::other("disk on fire");
    assert!(InputError::from_io(other).is_err());
}

#[test]
fn the_limit_can_come_from_the_environment() {
    // Each kind's own limit without the variable; the variable's byte count for every kind with it.
    assert_eq!(Inputs::new().limit(InputKind::EventsXml), 64 << 20);
    std::env::set_var(lizard_input::MAX_INPUT_VAR, "2GiB");
    let inputs = Inputs::from_env().expect("a byte count");
    assert_eq!(inputs.limit(InputKind::EventsXml), 2 << 30);
    std::env::set_var(lizard_input::MAX_INPUT_VAR, "lots");
    assert!(Inputs::from_env().is_err());
    std::env::remove_var(lizard_input::MAX_INPUT_VAR);
}
