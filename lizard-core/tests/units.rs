//! `Units`: the one unit vocabulary, read from each source's spelling and written back as text.

use lizard_core::Units;

#[test]
fn parse_covers_the_full_set() {
    let cases = [
        ("", Units::Unknown),
        ("B", Units::Bytes),
        ("bytes", Units::Bytes),
        ("°C", Units::Celsius),
        ("Hz", Units::Hertz),
        ("MHz", Units::Megahertz),
        ("pages", Units::Pages),
        ("RPM", Units::Rpm),
        ("s", Units::Seconds),
        ("V", Units::Volts),
        ("mV", Units::Millivolts),
        ("cycles", Units::Other("cycles".into())),
    ];
    for (text, units) in cases {
        assert_eq!(Units::parse(text), units, "{text:?}");
    }
}

#[test]
fn display_round_trips() {
    for text in [
        "", "B", "°C", "Hz", "MHz", "pages", "RPM", "s", "V", "mV", "%",
    ] {
        assert_eq!(Units::parse(text).to_string(), text);
    }
}

#[test]
fn mhz_scales_by_a_million_and_reads_in_hz() {
    assert_eq!(Units::Megahertz.scale(), 1e6);
    assert_eq!(Units::Megahertz.of_readings(), Units::Hertz);
    assert_eq!(Units::Hertz.scale(), 1.0);
    assert_eq!(Units::Bytes.of_readings(), Units::Bytes);
    assert_eq!(
        Units::Other("cycles".into()).of_readings(),
        Units::Other("cycles".into())
    );
}

/// Every unit text gator-xml knows converts to what reading the text itself gives.
#[test]
fn events_xml_units_convert_like_their_text() {
    let texts =
        "B bytes Hz MHz pages s ms us ns V mV °C RPM % W mW J A mA cycles instructions beats";
    for text in texts.split(' ').chain([""]) {
        let xml = gator_xml::Units::parse(text);
        assert_eq!(Units::from(&xml), Units::parse(text), "{text:?}");
    }
}

/// Every HWCPipe unit converts to what reading its name gives.
#[test]
fn hwcpipe_units_convert_like_their_names() {
    use hwcpipe::{CpuCounter, GpuCounter};
    let cpu = CpuCounter::ALL.iter().map(|c| c.unit());
    let gpu = GpuCounter::ALL
        .iter()
        .map(|g| hwcpipe::Unit::from(g.unit()));
    for unit in cpu.chain(gpu) {
        assert_eq!(Units::from(unit), Units::parse(unit.as_str()), "{unit}");
    }
    assert_eq!(Units::from(hwcpipe::Unit::Bytes), Units::Bytes);
}
