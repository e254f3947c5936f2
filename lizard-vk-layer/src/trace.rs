//! The Perfetto trace, written with `perfetto_writer` as the application runs: the process, the
//! layer's own notes, a track of frames, a track per `VkQueue` with a slice per workload, counter tracks
//! of pipeline statistics per queue, of lizard's counters per frame and, in `submit` mode, per command
//! buffer. Packets go to a buffer that is written to the file at the end of each frame (or when it grows
//! large), whole packets at a time: a killed application leaves a trace that reads up to its last
//! written frame.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::rc::Rc;

use lizard_core::Counter;
use perfetto_writer::{
    Arg, ArgId, CategoryId, Clock, CounterTrack, CounterValue, Name, NameId, TraceWriter, TrackId,
    Unit,
};

use crate::clock::Zero;
use crate::device::Device;
use crate::query_blocks::{COMPUTE_STATISTICS, GRAPHICS_STATISTICS};
use crate::results::Read;
use crate::workload::Kind;

/// Bytes buffered before they are written even within a frame.
const FLUSH_BYTES: usize = 1 << 20;

/// The packets not yet written, and the file; shared by the writer and the trace.
#[derive(Debug)]
struct Output {
    buffer: Vec<u8>,
    file: File,
}

/// The writer's side of [`Output`]: every `write` is one whole packet.
#[derive(Debug, Clone)]
struct Packets(Rc<RefCell<Output>>);

impl Write for Packets {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut out = self.0.borrow_mut();
        out.buffer.extend_from_slice(bytes);
        if out.buffer.len() >= FLUSH_BYTES {
            let Output { buffer, file } = &mut *out;
            file.write_all(buffer)?;
            buffer.clear();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut out = self.0.borrow_mut();
        let Output { buffer, file } = &mut *out;
        if !buffer.is_empty() {
            file.write_all(buffer)?;
            buffer.clear();
        }
        Ok(())
    }
}

/// A queue's tracks.
#[derive(Debug)]
struct QueueTracks {
    workloads: TrackId,
    /// Where the last slice ended (slices of one track may not overlap).
    last_end: u64,
    statistics: HashMap<&'static str, TrackId>,
    /// The serialised windows' tracks: command buffers, trapped workloads.
    serialised: [Option<TrackId>; 2],
}

/// Interned argument names.
#[derive(Debug)]
struct Args {
    kind: ArgId,
    command: ArgId,
    labels: ArgId,
    render_area: ArgId,
    draws: ArgId,
    clears: ArgId,
    executes: ArgId,
    frame: ArgId,
    command_buffer: ArgId,
    recording: ArgId,
    secondary: ArgId,
    submission: ArgId,
    gpu_ns: ArgId,
    overlap_ns: ArgId,
    clock: ArgId,
    note: ArgId,
    cpu_ns: ArgId,
    waits_ns: ArgId,
    without_waits_ns: ArgId,
    measured: ArgId,
    statistics: HashMap<&'static str, ArgId>,
}

/// The trace being written.
pub(crate) struct Trace {
    writer: TraceWriter<Packets>,
    output: Rc<RefCell<Output>>,
    zero: Zero,
    process: TrackId,
    layer: TrackId,
    frames: TrackId,
    devices: HashMap<u32, TrackId>,
    queues: HashMap<(u32, u64), QueueTracks>,
    frame_counters: Option<Vec<TrackId>>,
    /// lizard's counter tracks per serialised window: command buffers, trapped workloads.
    serialised_counters: [Option<Vec<TrackId>>; 2],
    kinds: HashMap<Kind, NameId>,
    category: CategoryId,
    args: Args,
}

/// A workload placed on the host's clock.
#[derive(Debug)]
pub(crate) struct Placed<'a> {
    /// What was read.
    pub read: &'a Read,
    /// `CLOCK_MONOTONIC` at its start and end.
    pub begin: u64,
    /// See `begin`.
    pub end: u64,
    /// Its frame.
    pub frame: u64,
    /// Its submission's number.
    pub submission: u64,
    /// Whether the device's clock was calibrated against the host's.
    pub calibrated: bool,
}

/// What a serialised window belongs to.
#[derive(Debug, Clone)]
pub(crate) enum Serialised {
    /// A command buffer submitted alone (`submit` mode).
    CommandBuffer(u64),
    /// A workload between two traps (`renderpass` mode).
    Workload {
        /// Its slice's name.
        name: String,
        /// Its kind.
        kind: Kind,
        /// Its frame.
        frame: u64,
    },
}

impl Serialised {
    fn index(&self) -> usize {
        match self {
            Serialised::CommandBuffer(_) => 0,
            Serialised::Workload { .. } => 1,
        }
    }

    fn name(&self) -> String {
        match self {
            Serialised::CommandBuffer(cb) => format!("command buffer {cb:#x}"),
            Serialised::Workload { name, .. } => name.clone(),
        }
    }

    /// The name and description of the queue's track of such windows.
    fn track(&self) -> (&'static str, &'static str) {
        match self {
            Serialised::CommandBuffer(_) => (
                "command buffers, serialised (submit mode)",
                "Each command buffer submitted alone and waited for: from its submission to the end of the \
                 layer's wait, with lizard's counters over that window",
            ),
            Serialised::Workload { .. } => (
                "workloads, trapped (renderpass mode)",
                "Each workload of a primary command buffer between the trap before it (or its submission) \
                 and the trap after it, where the GPU waited while lizard's counters were read",
            ),
        }
    }

    /// The name and description of the group of lizard's counters over such windows.
    fn counters(&self) -> (&'static str, &'static str) {
        match self {
            Serialised::CommandBuffer(_) => (
                "lizard counters per command buffer (submit mode)",
                "lizard's counters read over each command buffer's serialised window",
            ),
            Serialised::Workload { .. } => (
                "lizard counters per workload (renderpass mode)",
                "lizard's counters read between the traps around each workload",
            ),
        }
    }
}

/// The unit of a counter's readings, as Perfetto names it.
pub(crate) fn unit(counter: &Counter) -> Unit {
    match counter.units.of_readings().to_string().as_str() {
        "" => Unit::Count,
        "B" => Unit::Bytes,
        "ns" => Unit::TimeNs,
        other => Unit::Named(other.to_owned()),
    }
}

impl Trace {
    /// Creates the trace at `path` (truncating it) for process `pid` named `name`.
    pub(crate) fn create(path: &Path, zero: Zero, name: &str) -> io::Result<Trace> {
        let file = File::create(path)?;
        let output = Rc::new(RefCell::new(Output {
            buffer: Vec::with_capacity(64 << 10),
            file,
        }));
        let mut writer = TraceWriter::new(
            Packets(Rc::clone(&output)),
            Clock::Boottime {
                zero_ns: zero.boottime_ns,
            },
        )?;
        let process = writer.process(std::process::id() as i32, name)?;
        let layer = writer.group_described(
            crate::LAYER_NAME,
            "The layer's settings, what it turned on or could not, and why",
            Some(process),
        )?;
        let frames = writer.group_described(
            "frames",
            "One slice per frame, from one vkQueuePresentKHR to the next (the CPU's time)",
            Some(process),
        )?;
        let mut arg = |name: &str| writer.intern_arg(name);
        let args = Args {
            kind: arg("type"),
            command: arg("command"),
            labels: arg("labels"),
            render_area: arg("render_area"),
            draws: arg("draws"),
            clears: arg("clears"),
            executes: arg("secondary_command_buffers"),
            frame: arg("frame"),
            command_buffer: arg("command_buffer"),
            recording: arg("recording"),
            secondary: arg("secondary"),
            submission: arg("submission"),
            gpu_ns: arg("gpu_ns"),
            overlap_ns: arg("overlap_ns"),
            clock: arg("clock"),
            note: arg("note"),
            cpu_ns: arg("cpu_ns"),
            waits_ns: arg("layer_waits_ns"),
            without_waits_ns: arg("cpu_ns_without_layer_waits"),
            measured: arg("measured"),
            statistics: GRAPHICS_STATISTICS
                .iter()
                .chain(&COMPUTE_STATISTICS)
                .map(|(_, name)| (*name, arg(name)))
                .collect(),
        };
        let kinds = Kind::ALL
            .iter()
            .map(|k| (*k, writer.intern_name(k.name())))
            .collect();
        let category = writer.intern_category("gpu");
        Ok(Trace {
            writer,
            output,
            zero,
            process,
            layer,
            frames,
            devices: HashMap::new(),
            queues: HashMap::new(),
            frame_counters: None,
            serialised_counters: [None, None],
            kinds,
            category,
            args,
        })
    }

    /// Writes the buffered packets to the file.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        Packets(Rc::clone(&self.output)).flush()
    }

    /// A note of the layer's at `CLOCK_MONOTONIC` `at`.
    pub(crate) fn note(&mut self, at: u64, text: &str) -> io::Result<()> {
        let t = self.zero.since(at);
        self.writer
            .instant(self.layer, t, Name::Text(text), None, &[])
    }

    /// A device's track group, described.
    pub(crate) fn device(&mut self, device: &Device, description: &str) -> io::Result<()> {
        let name = format!("VkDevice {}: {}", device.id, device.info.name);
        let track = self
            .writer
            .group_described(&name, description, Some(self.process))?;
        self.devices.insert(device.id, track);
        Ok(())
    }

    fn queue(
        &mut self,
        device: &Device,
        queue: u64,
        position: Option<(u32, u32)>,
    ) -> io::Result<&mut QueueTracks> {
        if !self.queues.contains_key(&(device.id, queue)) {
            let parent = match self.devices.get(&device.id) {
                Some(t) => *t,
                None => {
                    self.device(device, "")?;
                    self.devices[&device.id]
                }
            };
            let name = match position {
                Some((family, index)) => format!("VkQueue family {family} index {index}"),
                None => format!("VkQueue {queue:#x}"),
            };
            let workloads = self.writer.group_described(
                &name,
                "A slice per workload (render pass, dispatch, copy, blit, resolve, clear): its time on the GPU \
                 from a timestamp before it (top of pipe) to one after it (bottom of pipe)",
                Some(parent),
            )?;
            self.queues.insert(
                (device.id, queue),
                QueueTracks {
                    workloads,
                    last_end: 0,
                    statistics: HashMap::new(),
                    serialised: [None, None],
                },
            );
        }
        Ok(self
            .queues
            .get_mut(&(device.id, queue))
            .expect("inserted above"))
    }

    /// A workload's slice on its queue's track, and its pipeline statistics on the queue's counter tracks.
    pub(crate) fn workload(
        &mut self,
        device: &Device,
        queue: u64,
        position: Option<(u32, u32)>,
        placed: &Placed<'_>,
    ) -> io::Result<()> {
        let read = placed.read;
        let w = &read.workload;
        let mut begin = self.zero.since(placed.begin);
        let end = self.zero.since(placed.end).max(begin);
        let tracks = self.queue(device, queue, position)?;
        let track = tracks.workloads;
        let overlap = tracks.last_end.saturating_sub(begin).min(end - begin);
        begin = begin.max(tracks.last_end.min(end));
        tracks.last_end = end;
        let labels = read
            .labels
            .iter()
            .map(|l| l.as_ref())
            .collect::<Vec<_>>()
            .join(" > ");
        let area = w.area.map(|a| {
            format!(
                "{}x{}+{}+{}",
                a.extent.width, a.extent.height, a.offset.x, a.offset.y
            )
        });
        let command_buffer = format!("{:#x}", read.command_buffer);
        let a = &self.args;
        let mut args: Vec<(ArgId, Arg<'_>)> = vec![
            (a.kind, Arg::Str(w.kind.name())),
            (a.command, Arg::Str(w.command)),
            (a.frame, Arg::Uint(placed.frame)),
            (a.submission, Arg::Uint(placed.submission)),
            (a.command_buffer, Arg::Str(&command_buffer)),
            (a.recording, Arg::Uint(read.recording)),
            (
                a.secondary,
                Arg::Str(if read.secondary { "yes" } else { "no" }),
            ),
            (a.gpu_ns, Arg::Uint(placed.end.saturating_sub(placed.begin))),
            (
                a.clock,
                Arg::Str(if placed.calibrated {
                    "calibrated to CLOCK_MONOTONIC"
                } else {
                    "the device's own clock"
                }),
            ),
        ];
        if !labels.is_empty() {
            args.push((a.labels, Arg::Str(&labels)));
        }
        if let Some(area) = &area {
            args.push((a.render_area, Arg::Str(area)));
        }
        if w.kind.is_render_pass() {
            args.push((a.draws, Arg::Uint(u64::from(w.draws))));
            if w.clears > 0 {
                args.push((a.clears, Arg::Uint(u64::from(w.clears))));
            }
            if w.executes > 0 {
                args.push((a.executes, Arg::Uint(u64::from(w.executes))));
            }
        }
        if overlap > 0 {
            args.push((a.overlap_ns, Arg::Uint(overlap)));
        }
        let statistics = statistics_names(w.kind);
        if let Some(values) = &read.statistics {
            for ((_, name), value) in statistics.iter().zip(values) {
                if let Some(id) = a.statistics.get(name) {
                    args.push((*id, Arg::Uint(*value)));
                }
            }
        } else if let Some(why) = w.no_statistics {
            args.push((a.note, Arg::Str(why)));
        }
        let name = match read.labels.last() {
            Some(label) => Name::Text(label),
            None => Name::Interned(self.kinds[&w.kind]),
        };
        self.writer
            .slice(track, begin, end, name, Some(self.category), &args)?;
        if let Some(values) = &read.statistics {
            for ((_, name), value) in statistics.iter().zip(values) {
                let tracks = self
                    .queues
                    .get_mut(&(device.id, queue))
                    .expect("made above");
                let track = match tracks.statistics.get(name) {
                    Some(t) => *t,
                    None => {
                        let title = format!("{name} per {}", w.kind.name());
                        let t = self.writer.counter_track(&CounterTrack {
                            description: "The pipeline-statistics query around each workload",
                            ..CounterTrack::new(&title, Some(track))
                        })?;
                        let tracks = self
                            .queues
                            .get_mut(&(device.id, queue))
                            .expect("made above");
                        tracks.statistics.insert(name, t);
                        t
                    }
                };
                self.writer.counter(
                    track,
                    begin,
                    CounterValue::Int(i64::try_from(*value).unwrap_or(i64::MAX)),
                )?;
            }
        }
        Ok(())
    }

    /// A frame's slice, from `start` to `end` (`CLOCK_MONOTONIC`).
    pub(crate) fn frame(
        &mut self,
        frame: u64,
        start: u64,
        end: u64,
        measured: bool,
        waits_ns: u64,
    ) -> io::Result<()> {
        let (begin, finish) = (self.zero.since(start), self.zero.since(end));
        let cpu = end.saturating_sub(start);
        let a = &self.args;
        let mut args = vec![
            (a.frame, Arg::Uint(frame)),
            (a.cpu_ns, Arg::Uint(cpu)),
            (a.measured, Arg::Str(if measured { "yes" } else { "no" })),
        ];
        if waits_ns > 0 {
            args.push((a.waits_ns, Arg::Uint(waits_ns)));
            args.push((a.without_waits_ns, Arg::Uint(cpu.saturating_sub(waits_ns))));
        }
        let name = format!("frame {frame}");
        self.writer.slice(
            self.frames,
            begin,
            finish.max(begin),
            Name::Text(&name),
            None,
            &args,
        )
    }

    /// lizard's counters over a frame starting at `start`, one value each (none when it has no reading).
    pub(crate) fn frame_counters(
        &mut self,
        counters: &[Counter],
        start: u64,
        values: &[Result<f64, String>],
    ) -> io::Result<()> {
        if self.frame_counters.is_none() {
            let group = self.writer.group_described(
                "lizard counters per frame",
                "lizard's counters (the engine's sources: this process's CPU counters, the Mali GPU, gatord) \
                 read over each frame, from one present to the next",
                Some(self.process),
            )?;
            let mut tracks = Vec::new();
            for c in counters {
                tracks.push(self.writer.counter_track(&CounterTrack {
                    description: &c.description,
                    unit: unit(c),
                    categories: &["lizard"],
                    ..CounterTrack::new(&c.name, Some(group))
                })?);
            }
            self.frame_counters = Some(tracks);
        }
        let t = self.zero.since(start);
        let tracks = self.frame_counters.clone().unwrap_or_default();
        for (track, value) in tracks.iter().zip(values) {
            if let Ok(v) = value {
                self.writer.counter(*track, t, CounterValue::Float(*v))?;
            }
        }
        Ok(())
    }

    /// A serialised window on the host, with lizard's counters over it: a command buffer's in `submit`
    /// mode, a trapped workload's in `renderpass` mode.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn serialised_window(
        &mut self,
        device: &Device,
        queue: u64,
        position: Option<(u32, u32)>,
        what: &Serialised,
        window: (u64, u64),
        waited_ns: u64,
        counters: &[Counter],
        values: &[Result<f64, String>],
    ) -> io::Result<()> {
        let workloads = self.queue(device, queue, position)?.workloads;
        let index = what.index();
        let existing = self.queues[&(device.id, queue)].serialised[index];
        let track = match existing {
            Some(t) => t,
            None => {
                let (name, description) = what.track();
                let t = self
                    .writer
                    .group_described(name, description, Some(workloads))?;
                self.queues
                    .get_mut(&(device.id, queue))
                    .expect("made above")
                    .serialised[index] = Some(t);
                t
            }
        };
        if self.serialised_counters[index].is_none() {
            let (name, description) = what.counters();
            let group = self
                .writer
                .group_described(name, description, Some(self.process))?;
            let mut tracks = Vec::new();
            for c in counters {
                tracks.push(self.writer.counter_track(&CounterTrack {
                    description: &c.description,
                    unit: unit(c),
                    categories: &["lizard"],
                    ..CounterTrack::new(&c.name, Some(group))
                })?);
            }
            self.serialised_counters[index] = Some(tracks);
        }
        let (begin, end) = (self.zero.since(window.0), self.zero.since(window.1));
        let name = what.name();
        let a = &self.args;
        let mut args = vec![(a.cpu_ns, Arg::Uint(window.1.saturating_sub(window.0)))];
        if waited_ns > 0 {
            args.push((a.waits_ns, Arg::Uint(waited_ns)));
        }
        if let Serialised::Workload { kind, frame, .. } = what {
            args.push((a.kind, Arg::Str(kind.name())));
            args.push((a.frame, Arg::Uint(*frame)));
        }
        self.writer
            .slice(track, begin, end.max(begin), Name::Text(&name), None, &args)?;
        let tracks = self.serialised_counters[index].clone().unwrap_or_default();
        for (track, value) in tracks.iter().zip(values) {
            if let Ok(v) = value {
                self.writer
                    .counter(*track, begin, CounterValue::Float(*v))?;
            }
        }
        Ok(())
    }

    /// Writes everything and closes the file.
    pub(crate) fn finish(self) -> io::Result<()> {
        let mut packets = self.writer.finish()?;
        packets.flush()?;
        self.output.borrow().file.sync_data()
    }
}

/// The statistics of a workload kind, in result order.
pub(crate) fn statistics_names(
    kind: Kind,
) -> &'static [(ash::vk::QueryPipelineStatisticFlags, &'static str)] {
    match kind {
        Kind::Dispatch => &COMPUTE_STATISTICS,
        _ => &GRAPHICS_STATISTICS,
    }
}
