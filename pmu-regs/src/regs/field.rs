//! What every register value type shares: field metadata, per-version masks and the field errors.
//!
//! The `register!` macro in this file writes the newtype, its getters and `with_*` setters, its
//! [`Register`] implementation (field table, RES0 and writable masks per [`PmuVersion`]) and a `Debug`
//! that prints every field.

use core::fmt;

use thiserror::Error;

use crate::version::PmuVersion;

/// How software may access a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read and write.
    ReadWrite,
    /// Read only; writes are ignored.
    ReadOnly,
    /// Write only (an action such as a reset); reads as zero.
    WriteOnly,
}

/// One field of a register: its position, width, the first PMU version that can have it and its access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldInfo {
    /// Field name, as the getter is named.
    pub name: &'static str,
    /// Bit position of the least significant bit.
    pub lsb: u32,
    /// Width in bits (1..=64).
    pub width: u32,
    /// The first PMU version in which the field can be implemented. Fields of optional features are
    /// placed at the first version whose architecture level can include the feature; before it they
    /// are RES0.
    pub since: PmuVersion,
    /// How software may access the field.
    pub access: Access,
}

impl FieldInfo {
    /// The field's mask, in place.
    pub const fn mask(&self) -> u64 {
        let ones = if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        };
        ones << self.lsb
    }

    /// The field's value inside `bits`, shifted down.
    pub const fn extract(&self, bits: u64) -> u64 {
        (bits & self.mask()) >> self.lsb
    }
}

/// A value too wide for the field it was meant for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("value {value:#x} does not fit the {width}-bit field {register}.{field}")]
pub struct FieldOverflow {
    /// Register name, e.g. `"PMCR_EL0"`.
    pub register: &'static str,
    /// Field name, e.g. `"n"`.
    pub field: &'static str,
    /// The rejected value.
    pub value: u64,
    /// Width of the field in bits.
    pub width: u32,
}

/// Bits set in a register value that are RES0 for the PMU version in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("{register} value has RES0 bits {bits:#x} set for {version}")]
pub struct Res0Violation {
    /// Register name.
    pub register: &'static str,
    /// The PMU version the value was checked against.
    pub version: PmuVersion,
    /// The offending bits (a subset of the RES0 mask).
    pub bits: u64,
}

/// A typed register value: a plain `Copy` newtype over the raw 64 bits, with a field table.
///
/// Values built from hardware reads keep every bit (`from_bits`), so a read-modify-write is faithful;
/// [`Register::sanitized`] clears RES0 bits deliberately.
pub trait Register: Copy + fmt::Debug {
    /// The architecture's register name.
    const NAME: &'static str;
    /// Every field the type models, lowest bit first.
    const FIELDS: &'static [FieldInfo];

    /// The raw value.
    fn to_bits(self) -> u64;

    /// A value from raw bits, keeping every bit.
    fn from_raw(bits: u64) -> Self;

    /// Bits that are RES0 for `version` (every bit no field of that version covers).
    fn res0_mask(version: PmuVersion) -> u64 {
        let mut defined = 0u64;
        for field in Self::FIELDS {
            if field.since <= version {
                defined |= field.mask();
            }
        }
        !defined
    }

    /// Bits that hold state a write can change for `version` (read-only and write-only action bits excluded).
    fn writable_mask(version: PmuVersion) -> u64 {
        let mut writable = 0u64;
        for field in Self::FIELDS {
            if field.since <= version && field.access == Access::ReadWrite {
                writable |= field.mask();
            }
        }
        writable
    }

    /// This value with the RES0 bits of `version` cleared.
    #[must_use]
    fn sanitized(self, version: PmuVersion) -> Self {
        Self::from_raw(self.to_bits() & !Self::res0_mask(version))
    }

    /// Checks that no RES0 bit of `version` is set.
    fn check_res0(self, version: PmuVersion) -> Result<(), Res0Violation> {
        let bits = self.to_bits() & Self::res0_mask(version);
        if bits == 0 {
            Ok(())
        } else {
            Err(Res0Violation {
                register: Self::NAME,
                version,
                bits,
            })
        }
    }
}

/// Writes `Name { bits: 0x.., field: value, .. }` for a register value.
pub(crate) fn debug_fields(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    bits: u64,
    fields: &[FieldInfo],
) -> fmt::Result {
    let mut d = f.debug_struct(name);
    d.field("bits", &format_args!("{bits:#x}"));
    for field in fields {
        let value = field.extract(bits);
        if field.width == 1 {
            d.field(field.name, &(value != 0));
        } else {
            d.field(field.name, &format_args!("{value:#x}"));
        }
    }
    d.finish()
}

/// Defines a register newtype with getters, `with_*` setters, a [`Register`] impl and a field `Debug`.
///
/// Field syntax: `flag name / with_name [bit], Access, Since;` for one bit, and
/// `field name / with_name [hi:lo] Type, Access, Since;` for several bits. `get_flag name [bit]` and
/// `get_field name [hi:lo] Type` write the getter alone (a status register software cannot write, so a
/// write fails to compile); `set_flag name / with_name [bit]` writes the setter alone (a write-only
/// register, which has nothing to read back).
macro_rules! register {
    (
        $(#[$meta:meta])*
        pub struct $name:ident = $reg_name:literal {
            $(
                $(#[$fmeta:meta])*
                $kind:ident $field:ident $(/ $with:ident)? [$($range:tt)*] $($fty:ty)?, $access:ident, $since:ident;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        #[repr(transparent)]
        pub struct $name(u64);

        impl $name {
            /// A value from raw bits, keeping every bit (use this for values read from hardware).
            #[inline]
            pub const fn from_bits(bits: u64) -> Self {
                Self(bits)
            }

            /// The raw value.
            #[inline]
            pub const fn bits(self) -> u64 {
                self.0
            }

            $(
                register!(@accessor $kind [$(#[$fmeta])*] $reg_name $field $($with)? [$($range)*] $($fty)?);
            )*
        }

        impl $crate::regs::field::Register for $name {
            const NAME: &'static str = $reg_name;
            const FIELDS: &'static [$crate::regs::field::FieldInfo] = &[
                $(
                    $crate::regs::field::FieldInfo {
                        name: stringify!($field),
                        lsb: register!(@lsb [$($range)*]),
                        width: register!(@width [$($range)*]),
                        since: $crate::version::PmuVersion::$since,
                        access: $crate::regs::field::Access::$access,
                    },
                )*
            ];

            fn to_bits(self) -> u64 {
                self.0
            }

            fn from_raw(bits: u64) -> Self {
                Self(bits)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                $crate::regs::field::debug_fields(
                    f,
                    stringify!($name),
                    self.0,
                    <Self as $crate::regs::field::Register>::FIELDS,
                )
            }
        }

        impl From<u64> for $name {
            fn from(bits: u64) -> Self {
                Self(bits)
            }
        }

        impl From<$name> for u64 {
            fn from(value: $name) -> u64 {
                value.0
            }
        }
    };

    (@lsb [$bit:literal]) => { $bit };
    (@lsb [$hi:literal : $lo:literal]) => { $lo };
    (@width [$bit:literal]) => { 1 };
    (@width [$hi:literal : $lo:literal]) => { $hi - $lo + 1 };

    (@accessor flag [$(#[$fmeta:meta])*] $reg_name:literal $field:ident $with:ident [$bit:literal]) => {
        $(#[$fmeta])*
        #[inline]
        pub const fn $field(self) -> bool {
            self.0 & (1u64 << $bit) != 0
        }

        #[doc = concat!("A copy with `", stringify!($field), "` (bit ", stringify!($bit), ") set to `value`.")]
        #[must_use]
        pub const fn $with(self, value: bool) -> Self {
            if value {
                Self(self.0 | (1u64 << $bit))
            } else {
                Self(self.0 & !(1u64 << $bit))
            }
        }
    };

    (@accessor get_flag [$(#[$fmeta:meta])*] $reg_name:literal $field:ident [$bit:literal]) => {
        $(#[$fmeta])*
        #[inline]
        pub const fn $field(self) -> bool {
            self.0 & (1u64 << $bit) != 0
        }
    };

    (@accessor set_flag [$(#[$fmeta:meta])*] $reg_name:literal $field:ident $with:ident [$bit:literal]) => {
        $(#[$fmeta])*
        #[must_use]
        pub const fn $with(self, value: bool) -> Self {
            if value {
                Self(self.0 | (1u64 << $bit))
            } else {
                Self(self.0 & !(1u64 << $bit))
            }
        }
    };

    (@accessor get_field [$(#[$fmeta:meta])*] $reg_name:literal $field:ident [$hi:literal : $lo:literal] $fty:ty) => {
        $(#[$fmeta])*
        pub const fn $field(self) -> $fty {
            ((self.0 >> $lo) & ((1u64 << ($hi - $lo + 1)) - 1)) as $fty
        }
    };

    (@accessor field [$(#[$fmeta:meta])*] $reg_name:literal $field:ident $with:ident [$hi:literal : $lo:literal] $fty:ty) => {
        $(#[$fmeta])*
        pub const fn $field(self) -> $fty {
            ((self.0 >> $lo) & ((1u64 << ($hi - $lo + 1)) - 1)) as $fty
        }

        #[doc = concat!(
            "A copy with `", stringify!($field), "` (bits `[", stringify!($hi), ":", stringify!($lo),
            "]`) set to `value`, or [`FieldOverflow`](crate::FieldOverflow) if `value` does not fit."
        )]
        pub const fn $with(self, value: $fty) -> Result<Self, $crate::regs::field::FieldOverflow> {
            let mask = (1u64 << ($hi - $lo + 1)) - 1;
            let value = value as u64;
            if value > mask {
                Err($crate::regs::field::FieldOverflow {
                    register: $reg_name,
                    field: stringify!($field),
                    value,
                    width: $hi - $lo + 1,
                })
            } else {
                Ok(Self((self.0 & !(mask << $lo)) | (value << $lo)))
            }
        }
    };
}

pub(crate) use register;
