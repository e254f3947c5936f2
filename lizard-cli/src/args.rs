//! The command line: subcommands and their flags.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use hwcpipe::counting::{Target, TargetError};

/// List, capture and inspect Arm CPU and Mali GPU hardware counters, locally (perf, Mali kbase) or
/// through gatord (Arm Streamline's daemon).
#[derive(Debug, Parser)]
#[command(name = "lizard", version, about, long_about = None, after_help = crate::error::EXIT_STATUSES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// The largest input file any subcommand reads (e.g. 4GiB), instead of each kind's own limit (a
    /// capture document 512 MiB, an events XML file 64 MiB, an ELF image 512 MiB, a text table 16 MiB, a
    /// trace buffer read whole 256 MiB, a streamed frame file or trace 64 GiB; also LIZARD_MAX_INPUT).
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_size_u64)]
    pub max_input: Option<u64>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the counters every source offers, with their ids.
    List(ListArgs),
    /// Capture counters for a while and print their totals (and time series).
    Capture(CaptureArgs),
    /// Run a command and count its CPU events, like `perf stat`.
    Stat(StatArgs),
    /// Read a Streamline local capture (`.apc` directory).
    ApcDump(ApcDumpArgs),
    /// List the counters described by gatord events XML files.
    Events(EventsArgs),
    /// Run a gatord stand-in on loopback that serves simulated counters.
    GatordSim(GatordSimArgs),
    /// Decode a raw CoreSight trace buffer holding an STM (MIPI STPv2) stream.
    StmDump(StmDumpArgs),
    /// Why are there no counters? Check each source (the CPU's perf events, the Mali GPU, gatord, the trace
    /// server's CUDA copies): what works, what does not, the cause and the command that fixes it. Exits 3
    /// when a source named with --source gives no counters, or without --source when a source this machine
    /// has does not work (one it does not have, such as a Mali GPU on a PC, is said and not counted).
    Doctor(DoctorArgs),
    /// Read an STM trace buffer as messages: a Perfetto timeline and statistics (TI KeyStone II STMLib).
    StmReport(StmReportArgs),
    /// Receive trace records from applications into a bounded ring.
    TraceServer(TraceServerArgs),
    /// Print the records of a saved trace ring file.
    TraceDump(TraceDumpArgs),
    /// Make the HTML report (charts and summary) of a capture saved with `capture --format json`.
    Report(ReportArgs),
    /// Compare two captures saved with `capture --format json`, counter by counter; with
    /// --max-increase, exit 5 when a counter grew past it (a CI gate).
    Diff(DiffArgs),
    /// Serve counters to Prometheus (OpenMetrics / Prometheus text at http://HOST:PORT/metrics),
    /// sampling them window after window until Ctrl-C or SIGTERM.
    Serve(ServeArgs),
}

/// A source `lizard doctor` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DoctorSource {
    /// The CPU's counters (perf events).
    Cpu,
    /// The Mali GPU's counters (the kbase driver).
    Gpu,
    /// gatord (needs --gatord).
    Gatord,
    /// The trace server's copies of GPU device memory (the CUDA driver).
    Trace,
}

/// `lizard doctor`.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Also check gatord at HOST:PORT (IPv6 in brackets).
    #[arg(long, value_name = "HOST:PORT")]
    pub gatord: Option<String>,
    /// Check only these sources (comma-separated; default: cpu, gpu, trace, and gatord with --gatord).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub source: Vec<DoctorSource>,
    /// Table or JSON.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// Where counters come from.
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    /// gatord's address, HOST:PORT (IPv6 in brackets: `[::1]:8080`). Without it, 127.0.0.1:8080 is tried briefly.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "no_gatord")]
    pub gatord: Option<String>,
    /// Do not use gatord.
    #[arg(long)]
    pub no_gatord: bool,
    /// Do not read counters locally (perf events, Mali GPU).
    #[arg(long, conflicts_with = "local")]
    pub no_hwcpipe: bool,
    /// With gatord, also read the local counters (HWCPipe). Its CPU counters count only this `lizard`
    /// process, not the system gatord measures, and are labelled so. Without gatord they are read anyway.
    #[arg(long)]
    pub local: bool,
}

/// What the local CPU counters count. Without any of these, `capture` counts the whole system where the
/// kernel allows it (gatord's counters are system-wide too).
#[derive(Debug, Clone, Default, Args)]
pub struct TargetArgs {
    /// Count an existing process, all its threads (and the threads and processes they create).
    #[arg(long, short = 'p', value_name = "PID", conflicts_with_all = ["system_wide", "cpu", "per_cpu", "command"])]
    pub pid: Option<i32>,
    /// Count everything on every online CPU (CPU-wide counters, summed over the CPUs).
    #[arg(long, short = 'a', conflicts_with_all = ["cpu", "command"])]
    pub system_wide: bool,
    /// Count everything on these CPUs (e.g. 0-3,6), CPU-wide, summed over them.
    #[arg(long, short = 'C', value_name = "LIST", value_parser = parse_cpus, conflicts_with = "command")]
    pub cpu: Option<CpuList>,
    /// With --system-wide or --cpu (implies --system-wide alone): one series per CPU, named COUNTER@cpuN,
    /// instead of the sum.
    #[arg(long, short = 'A', conflicts_with = "command")]
    pub per_cpu: bool,
    /// A command to run and count, after `--` (all its threads and children, from its first instruction).
    #[arg(last = true, num_args = 1.., value_name = "CMD")]
    pub command: Vec<String>,
}

impl TargetArgs {
    /// The target the flags name, if any.
    pub fn target(&self) -> Result<Option<Target>, TargetError> {
        if let Some(pid) = self.pid {
            return Ok(Some(Target::Pid(pid)));
        }
        if !self.command.is_empty() {
            return Ok(Some(Target::Command(self.command.clone())));
        }
        if let Some(cpus) = &self.cpu {
            return Ok(Some(Target::Cpus {
                cpus: cpus.0.clone(),
                per_cpu: self.per_cpu,
                all: false,
            }));
        }
        if self.system_wide || self.per_cpu {
            return Target::system_wide(self.per_cpu).map(Some);
        }
        Ok(None)
    }
}

/// Output formats of `list`, `events`, `stat`, `diff` and `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// Aligned columns for people.
    Table,
    /// One JSON document.
    Json,
}

/// Output formats of `capture`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CaptureFormat {
    /// Per-counter readings in aligned columns.
    Table,
    /// The time series, one sample a row.
    Csv,
    /// Readings and time series in one JSON document.
    Json,
    /// Trace Event JSON (counter events) for Perfetto UI and chrome://tracing.
    ChromeTrace,
    /// One self-contained HTML page: a chart per counter and the summary table (see `lizard report`).
    Html,
    /// A native Perfetto trace (protobuf, `.pftrace`): counter tracks with units, Mali counters as GPU
    /// counters, trace records as instants. Binary: needs --output or a pipe.
    Perfetto,
}

/// Output formats of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// One self-contained HTML page: a chart per counter and the summary table.
    Html,
    /// A native Perfetto trace (protobuf, `.pftrace`), as `capture --format perfetto` writes it.
    Perfetto,
}

/// Output formats of `apc-dump`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DumpFormat {
    /// Summary and samples for people.
    Table,
    /// One JSON document.
    Json,
    /// The resolved samples, one a row.
    Csv,
}

/// Output formats of `stm-dump`, `stm-report` and `trace-dump`: the same names as every other
/// subcommand's (`table` for people, `json`), with `text` kept as another name for `table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextFormat {
    /// For people: one line per item.
    #[value(alias = "text")]
    Table,
    /// One JSON document.
    Json,
}

/// `lizard list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Counter sources.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// What the local CPU counters would count (a command given here is started held and never run).
    #[command(flatten)]
    pub target: TargetArgs,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// `lizard capture`.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Counter sources.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Counters to capture, by name, comma-separated (see `lizard list`): also any Arm PMU event of this
    /// CPU, by Arm's mnemonic (L2D_CACHE_REFILL), the kernel's name (l2d_cache_refill) or number (0x4005,
    /// r4005), counted on every core type that has it (PMU/EVENT/ for one).
    #[arg(
        long,
        short = 'e',
        visible_alias = "events",
        value_delimiter = ',',
        conflicts_with = "all"
    )]
    pub counters: Vec<String>,
    /// Capture every counter, a counter set's events in its slots by id. Without --counters or --all, every
    /// counter is captured too, but a counter set's slots get the events IPC and the branch and cache miss
    /// rates need (said in one line).
    #[arg(long)]
    pub all: bool,
    /// How long to capture (e.g. 500ms, 2s, 1m). Default: 2s, or until the command exits when one is
    /// given (a command still running then is killed).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// The local counters' sampling interval (at least 100us; what each capture delivered of it, the
    /// periods missed and the largest gap are in every output). CPU-wide counters are sampled by the
    /// kernel's timers: Linux takes no sample on an idle CPU, and below about 1 ms it throttles a tickless
    /// CPU's timer (`perf_event_max_sample_rate`); both are counted and shown with their reason.
    #[arg(long, default_value = "10ms", value_parser = parse_interval)]
    pub interval: Duration,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CaptureFormat::Table)]
    pub format: CaptureFormat,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Also receive application trace records on this socket name (see `lizard trace-server`) and put
    /// those that fall in the capture window into the output.
    #[arg(long, value_name = "SOCKET")]
    pub trace: Option<String>,
    /// Also show each core's part of a counter gatord counts per core (its perf-backed CPU counters), as
    /// `COUNTER@cpuN` readings and series beside the combined one.
    #[arg(long)]
    pub per_core: bool,
    /// What the local CPU counters count.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `lizard serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Counter sources.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Counters to serve, by name, comma-separated (default: every counter, each gatord counter set
    /// filled up to its slots); also any Arm PMU event of this CPU, by Arm's mnemonic, the kernel's name or
    /// number, as for `capture`.
    #[arg(long, short = 'e', visible_alias = "events", value_delimiter = ',')]
    pub counters: Vec<String>,
    /// Where to listen, HOST:PORT. Loopback by default; name another interface's address (or 0.0.0.0)
    /// to be scraped from other hosts.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:9477", value_parser = parse_listen)]
    pub listen: std::net::SocketAddr,
    /// The sampling window (at least 100ms): a scrape answers with the last window closed, delta
    /// counters as totals since the start, absolute ones as the window's level.
    #[arg(long, default_value = "1s", value_parser = parse_window)]
    pub interval: Duration,
    /// What the local CPU counters count.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// A `--listen` address: HOST:PORT with a host name (`localhost:9477`), an IPv4 address or an IPv6 address
/// in brackets (`[::1]:9477`); a name is resolved, and its first address taken.
pub fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    let address: lizard_core::GatordAddress = text.parse().map_err(|e| {
        format!("'{text}' is not HOST:PORT ({e}); e.g. localhost:9477, 0.0.0.0:9477, [::1]:9477")
    })?;
    resolve(&address.host, address.port)
}

/// The first address `host` (a name, or an IP address with or without brackets) resolves to, with `port`.
pub fn resolve(host: &str, port: u16) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(std::net::SocketAddr::new(ip, port));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("'{host}' does not resolve: {e}"))?
        .next()
        .ok_or_else(|| format!("'{host}' resolves to no address"))
}

/// The shortest `lizard serve` window.
const MIN_WINDOW: Duration = Duration::from_millis(100);

/// A `lizard serve` window: a duration of at least 100 ms.
pub fn parse_window(text: &str) -> Result<Duration, String> {
    let window = parse_duration(text)?;
    if window < MIN_WINDOW {
        return Err(format!(
            "'{text}' is shorter than the shortest window, 100ms: scrapers read at most every second"
        ));
    }
    Ok(window)
}

/// `lizard stat`.
#[derive(Debug, Args)]
pub struct StatArgs {
    /// Counters to count, by name, comma-separated (default: all of HWCPipe's CPU counters): HWCPipe's
    /// counters, any Arm PMU event of this CPU by Arm's mnemonic (L2D_CACHE_REFILL), the kernel's name
    /// (l2d_cache_refill) or number (0x4005, r4005) — counted on every core type that has it, summed and
    /// per core type (PMU/EVENT/ for one) — and Mali GPU counters. `-e`/`--events` is perf's spelling.
    /// Arm's per-core event lists (every event of the core in hand, with its description) are read from
    /// the folder LIZARD_PMU_DATA names.
    #[arg(long, short = 'e', visible_alias = "events", value_delimiter = ',')]
    pub counters: Vec<String>,
    /// Also compute the CPU metrics (IPC, branch and cache effectiveness, top-down cycle accounting) from
    /// the same counting, counting their inputs too; each one the CPU cannot give says why.
    #[arg(long)]
    pub metrics: bool,
    /// Output format: the table (on standard error, as perf's), or the JSON document (on standard output;
    /// a counted command's own standard output then goes to standard error).
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Write the output to this file instead (the command's own output stays where it was).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// With --pid, --system-wide or --cpu: stop counting after this long (default: when the process
    /// exits, or at Ctrl-C).
    #[arg(long, value_parser = parse_duration, conflicts_with = "command")]
    pub duration: Option<Duration>,
    /// Count user-space execution only (`exclude_kernel`), like perf's `:u` modifier. By default
    /// kernel code is counted too where the kernel allows it.
    #[arg(long)]
    pub user_only: bool,
    /// What to count: one of `-- CMD ARGS…`, --pid, --system-wide, --cpu.
    #[command(flatten)]
    pub target: TargetArgs,
}

/// `lizard apc-dump`.
#[derive(Debug, Args)]
pub struct ApcDumpArgs {
    /// The capture directory (holding `0000000000` and `captured.xml`).
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DumpFormat::Table)]
    pub format: DumpFormat,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// `lizard events`.
#[derive(Debug, Args)]
pub struct EventsArgs {
    /// gatord events files: whole `<events>` documents or the fragments gatord ships.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// `lizard gatord-sim`.
#[derive(Debug, Args)]
pub struct GatordSimArgs {
    /// The TCP port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// The address to listen on: a host name, an IPv4 address or an IPv6 address (brackets optional).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// Serve the hardware counters of this Mali GPU (e.g. G71, G78, G710); `--gpu list` lists them.
    #[arg(long, conflicts_with = "events")]
    pub gpu: Option<String>,
    /// Serve the counters of this events XML file instead.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// The protocol generation to speak.
    #[arg(long, default_value = "950", value_parser = ["670", "950"])]
    pub protocol: String,
    /// Serve these counters of the events served as gatord serves CPU PMU counters: PERF_ATTRS + PERF_DATA
    /// sample records with group reads, one frame per core (e.g. Sim_ccnt, the built-in events' cycle
    /// counter; with --events, a counter of that file). Comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub perf_counters: Vec<String>,
    /// Serve these counters as gatord serves a PERF_COUNT_SW_* counter configured without a count:
    /// announced, opened for counting only, never sent. Comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub counting_only: Vec<String>,
    /// The number of CPUs perf-backed counters come from.
    #[arg(long, default_value_t = 2)]
    pub cores: u32,
    /// Stop after this long (default: until Ctrl-C).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
}

/// `lizard stm-dump`.
#[derive(Debug, Args)]
pub struct StmDumpArgs {
    /// The trace buffer: CoreSight formatted 16-byte frames, or a bare STP stream. Without --trace-id or
    /// --bare, its first 64 KiB say which (frames of one trace ID are decoded for that ID).
    pub file: PathBuf,
    /// The trace ID of the STM source in the frames (0x01 to 0x6F, e.g. 0x20).
    #[arg(long, value_parser = parse_trace_id, conflicts_with = "bare")]
    pub trace_id: Option<u8>,
    /// The file is a bare STP byte stream (no CoreSight frames), whatever its first bytes look like.
    #[arg(long)]
    pub bare: bool,
    /// Print elements (software messages, flags, triggers) instead of packets.
    #[arg(long)]
    pub elements: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// `lizard stm-report`.
#[derive(Debug, Args)]
pub struct StmReportArgs {
    /// The trace buffer: a dump in order (with --dcm), a raw circular buffer (--wrapped --write-pointer),
    /// or a capture from its start.
    pub file: PathBuf,
    /// The `.dcm` sidecar TI's tools saved with the dump: says whether it holds TWP frames.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["wrapped", "write_pointer"])]
    pub dcm: Option<PathBuf>,
    /// The file is the trace buffer's memory as the TBR left it, full: its oldest word is at --write-pointer.
    #[arg(long, requires = "write_pointer")]
    pub wrapped: bool,
    /// The TBR's write pointer (its RWP register), in 32-bit words. Without --wrapped, words 0 to N-1 are
    /// the data.
    #[arg(long, value_name = "N", value_parser = parse_u32)]
    pub write_pointer: Option<u32>,
    /// The STM's trace ID in TWP / CoreSight frames (0x01 to 0x6F; default 0x40, KeyStone II's STM, when
    /// frames are used). Without --dcm, giving it means the file holds frames; without it or --bare, the
    /// file's first 64 KiB say whether it holds frames.
    #[arg(long, value_parser = parse_trace_id, conflicts_with = "bare")]
    pub trace_id: Option<u8>,
    /// The file is a bare STP byte stream (no TWP or CoreSight frames), whatever its first bytes look like.
    #[arg(long, conflicts_with = "dcm")]
    pub bare: bool,
    /// The device: names the masters (DSP0..., Arm0...).
    #[arg(long, value_enum)]
    pub device: Option<StmDevice>,
    /// The hardware (CP Tracer) masters, FIRST-LAST (default 0x80-0xff).
    #[arg(long, value_name = "FIRST-LAST", value_parser = parse_master_range)]
    pub hardware_masters: Option<(u16, u16)>,
    /// The target's ELF file, where printf format strings are read: FILE for every master, or
    /// MASTER=FILE (a number, or DSPn/Armn with --device) for one. Repeatable.
    #[arg(long = "elf", value_name = "[MASTER=]FILE")]
    pub elf: Vec<String>,
    /// A dictionary: names of values on channels, and of channels ('value [MASTER:]CHANNEL VALUE NAME',
    /// 'channel [MASTER:]CHANNEL NAME' lines).
    #[arg(long, value_name = "FILE")]
    pub dict: Option<PathBuf>,
    /// A span to measure per master: NAME=START..END, each a text the message contains or a value it
    /// carries, optionally @CHANNEL: first. Repeatable.
    #[arg(long = "span", value_name = "NAME=START..END")]
    pub spans: Vec<String>,
    /// The STM timestamp clock in Hz (default: the trace's FREQ packet; else times are in ticks).
    #[arg(long, value_name = "HZ", value_parser = parse_hz)]
    pub stm_clock: Option<u64>,
    /// A layout of CP Tracer words: 'NAME HIGH:LOW [bytes|master]' lines (no layout ships: TI has not
    /// published one).
    #[arg(long, value_name = "FILE")]
    pub cptracer_layout: Option<PathBuf>,
    /// With --cptracer-layout: the window CP Tracer throughput is given per (e.g. 1ms, 100us).
    #[arg(long, value_parser = parse_stm_window, requires = "cptracer_layout")]
    pub window: Option<Duration>,
    /// Write the timeline to this Perfetto trace.
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,
    /// Also give every message: one line each before the statistics, or with --format json the
    /// document's `messages` array (each message's time, master, channel, kind, text and bytes).
    #[arg(long)]
    pub messages: bool,
    /// The report's format: statistics as text, or one JSON document.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Write the report (statistics, and messages with --messages) to this file instead of standard
    /// output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `--device` of `stm-report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StmDevice {
    /// 66AK2H: DSP0-7 are masters 0-7, Arm0-3 masters 8-11.
    K2h,
    /// 66AK2E: DSP0 is master 0, Arm0-3 masters 8-11.
    K2e,
    /// 66AK2L: DSP0-3 are masters 0-3, Arm0-1 masters 8-9.
    K2l,
}

/// A 32-bit number, decimal or 0x hexadecimal.
pub fn parse_u32(text: &str) -> Result<u32, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| format!("'{text}' is not a 32-bit number (decimal or 0x hex)"))
}

/// A CP Tracer throughput window: a duration above zero (e.g. 1ms, 100us).
pub fn parse_stm_window(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        window if window.is_zero() => Err(format!("'{text}' is not a window above zero")),
        window => Ok(window),
    }
}

/// A frequency in Hz: a positive whole number.
pub fn parse_hz(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(hz) if hz > 0 => Ok(hz),
        _ => Err(format!(
            "'{text}' is not a frequency in Hz (a positive whole number)"
        )),
    }
}

/// `FIRST-LAST` masters (each decimal or 0x hex, FIRST <= LAST).
pub fn parse_master_range(text: &str) -> Result<(u16, u16), String> {
    let bad = || format!("'{text}' is not FIRST-LAST masters (e.g. 0x80-0xff)");
    let (first, last) = text.split_once('-').ok_or_else(bad)?;
    let number = |t: &str| {
        parse_u32(t)
            .ok()
            .and_then(|v| u16::try_from(v).ok())
            .ok_or_else(bad)
    };
    let (first, last) = (number(first)?, number(last)?);
    if first > last {
        return Err(bad());
    }
    Ok((first, last))
}

/// `lizard trace-server`.
#[derive(Debug, Args)]
pub struct TraceServerArgs {
    /// The socket name: an abstract name (`@name`) or a file path.
    #[arg(long, default_value = "@lizard-trace")]
    pub socket: String,
    /// The ring's capacity (e.g. 64MiB, 512KiB, 1000000). Default: 64MiB, or the --ring file's own.
    #[arg(long, value_parser = parse_size)]
    pub capacity: Option<usize>,
    /// Continue from a ring saved earlier (`--output`): its records are kept and new ones get the sequence
    /// numbers after them; the ring keeps the saved capacity.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["capacity", "ring"])]
    pub load: Option<PathBuf>,
    /// Keep the ring in this file, mapped shared (on tmpfs such as /dev/shm, or on disk): its committed
    /// records survive the server's crash, the next server started on it keeps them and says what was
    /// lost, and `lizard trace-dump FILE` reads it while the server runs. Created (mode 0600) when missing.
    #[arg(long, value_name = "FILE")]
    pub ring: Option<PathBuf>,
    /// With --ring: write the file back every N records, or every TIME (10ms, 1s), waiting for the disk,
    /// so that a power cut loses at most that much; `never` (the default) leaves it to the kernel.
    #[arg(long, value_name = "N|TIME", requires = "ring", value_parser = parse_sync)]
    pub sync: Option<lizard_trace::shared_ring::SyncPolicy>,
    /// Save the ring to this file when the server stops.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// The largest payload a record may have (e.g. 256MiB), inline, in a memfd or copied from GPU device
    /// memory; larger records are refused and counted. At most 4GiB minus one byte, and no record is stored
    /// that does not fit the ring. One server thread copies: a large record delays the others' records by
    /// its copy time.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_payload_size)]
    pub max_payload: u32,
    /// Do not load the CUDA driver: every GPU device-memory record is refused (and the ring is not pinned).
    #[arg(long)]
    pub no_device: bool,
    /// Most CUDA IPC handles one client process keeps open between its device records.
    #[arg(long, value_name = "N", default_value_t = lizard_trace::handle_cache::DEFAULT_HANDLES_PER_PROCESS)]
    pub max_open_handles: usize,
    /// Most bytes of GPU allocations kept mapped between records, over all clients (e.g. 4GiB): also the most
    /// freed GPU memory the server can keep alive.
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = parse_size)]
    pub max_mapped: usize,
    /// Stop after this long (default: until Ctrl-C).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Also admit clients of these user ids (comma-separated). By default only clients of the server's
    /// own user and root are admitted; others are closed at once and counted.
    #[arg(long, value_delimiter = ',', value_name = "UID")]
    pub allow_uid: Vec<u32>,
    /// Also admit clients whose effective group id is one of these (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "GID")]
    pub allow_gid: Vec<u32>,
    /// Admit clients of every user (an abstract socket has no file permissions to limit them).
    #[arg(long, conflicts_with_all = ["allow_uid", "allow_gid"])]
    pub allow_anyone: bool,
    /// With a path --socket: the socket file's permission bits, in octal (e.g. 660: the server's user and
    /// group may connect; the kernel refuses everyone else before the server sees them).
    #[arg(long, value_name = "OCTAL", value_parser = parse_mode)]
    pub socket_mode: Option<u32>,
}

/// A `--sync` policy: `never`, a number of records, or a time.
pub fn parse_sync(text: &str) -> Result<lizard_trace::shared_ring::SyncPolicy, String> {
    text.parse()
        .map_err(|e: lizard_trace::shared_ring::BadSyncPolicy| e.to_string())
}

/// Permission bits in octal (`660`, `0o600`, `0600`).
pub fn parse_mode(text: &str) -> Result<u32, String> {
    let digits = text.trim().trim_start_matches("0o");
    match u32::from_str_radix(digits, 8) {
        Ok(mode) if mode <= 0o777 => Ok(mode),
        _ => Err(format!(
            "'{text}' is not permission bits in octal (000 to 777, e.g. 660)"
        )),
    }
}

/// `lizard trace-dump`.
#[derive(Debug, Args)]
pub struct TraceDumpArgs {
    /// A ring file saved by `lizard trace-server --output`, or the shared ring file of `trace-server --ring`
    /// (read while its server writes: a consistent snapshot, with the sequence range it holds).
    pub file: PathBuf,
    /// With a shared ring file: print its records as they are committed, until Ctrl-C.
    #[arg(long)]
    pub follow: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// `lizard report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A capture's JSON document (`lizard capture --format json -o capture.json`).
    pub capture: PathBuf,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Html)]
    pub format: ReportFormat,
}

/// `lizard diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The base capture's JSON document.
    pub base: PathBuf,
    /// The new capture's JSON document.
    pub new: PathBuf,
    /// The counters to judge with --max-increase, comma-separated (default: every counter in both).
    /// A named counter that either capture lacks, or that has no value in one, fails the comparison.
    #[arg(long, value_delimiter = ',')]
    pub counters: Vec<String>,
    /// Exit 5 when a judged counter's reading grew by more than this many percent of the base's (or from
    /// 0 to more).
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub max_increase: Option<f64>,
    /// Compare delta counters per second of each capture's window (rates), for captures of different
    /// lengths; levels and equations are compared as they are.
    #[arg(long)]
    pub per_second: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
    /// Write the output to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// A percentage: a finite number, 0 or more.
pub fn parse_percent(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('%').parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!("'{text}' is not a percentage (try 5 or 2.5)")),
    }
}

/// Parses `500ms`, `2s`, `1.5s`, `1m`, `250us` or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    crate::quantity::parse_duration(text).map_err(|e| e.to_string())
}

/// A sampling interval: a duration no shorter than the engine samples at.
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = parse_duration(text)?;
    if interval < lizard_core::MIN_SAMPLE_INTERVAL {
        return Err(format!(
            "'{text}' is shorter than the shortest sampling interval, {}us: a thread woken more often \
             spends its time being woken and misses periods",
            lizard_core::MIN_SAMPLE_INTERVAL.as_micros()
        ));
    }
    Ok(interval)
}

/// CPU numbers, from a list such as `0-3,6`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<u32>);

/// Parses a CPU list such as `0-3,6`.
pub fn parse_cpus(text: &str) -> Result<CpuList, String> {
    hwcpipe::counting::parse_cpu_list(text)
        .map(CpuList)
        .map_err(|err| err.to_string())
}

/// Parses a ring capacity such as `64MiB`, `512KiB` or `4096` (bytes).
pub fn parse_size(text: &str) -> Result<usize, String> {
    lizard_core::input::parse_byte_count(text).map_err(|e| e.to_string())
}

/// Parses a byte count such as `4GiB` as a `u64`.
pub fn parse_size_u64(text: &str) -> Result<u64, String> {
    parse_size(text).map(|bytes| bytes as u64)
}

/// A CoreSight trace ID: 7 bits, 0x01 to 0x6F (0x00 marks no source, 0x70 to 0x7F are reserved).
pub fn parse_trace_id(text: &str) -> Result<u8, String> {
    match parse_u8(text) {
        Ok(id @ 0x01..=0x6F) => Ok(id),
        _ => Err(format!(
            "'{text}' is not a trace ID: trace IDs are 7-bit, 0x01 to 0x6F (0x00 and 0x70 to 0x7F are reserved)"
        )),
    }
}

/// A payload size (`256MiB`): a byte count a record's 32-bit length can hold.
pub fn parse_payload_size(text: &str) -> Result<u32, String> {
    let size = parse_size(text)?;
    u32::try_from(size).map_err(|_| {
        format!(
            "'{text}' is larger than a record can be ({} bytes, 4GiB minus one)",
            u32::MAX
        )
    })
}

/// Parses a number given in decimal or as `0x…` hexadecimal, 0..=255.
pub fn parse_u8(text: &str) -> Result<u8, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u8::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("'{text}' is not a number from 0 to 255 (e.g. 0x20)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_sizes_fit_a_records_length() {
        assert_eq!(parse_payload_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_payload_size("4294967295"), Ok(u32::MAX));
        let error = parse_payload_size("4GiB").unwrap_err();
        assert!(error.contains("larger than a record can be"), "{error}");
        assert!(parse_payload_size("lots").is_err());
    }

    #[test]
    fn sampling_intervals_are_refused_below_the_engines_shortest() {
        assert_eq!(parse_interval("100us"), Ok(Duration::from_micros(100)));
        assert_eq!(parse_interval("10ms"), Ok(Duration::from_millis(10)));
        for short in ["0", "0s", "99us", "50ns"] {
            let error = parse_interval(short).unwrap_err();
            assert!(
                error.contains("shortest sampling interval, 100us"),
                "{short}: {error}"
            );
        }
        assert!(parse_interval("soon").is_err());
    }

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn trace_ids_parse_in_hex_and_decimal() {
        assert_eq!(parse_u8("0x20"), Ok(0x20));
        assert_eq!(parse_u8("16"), Ok(16));
        assert!(parse_u8("0x100").is_err());
    }
}
