//! The level of a game's kill switch: how much of the engine the studio has turned off.
//!
//! Levels are cumulative: each one turns off what the level below turns off, and more. On
//! every wire (REST, WebSocket JSON and MessagePack, the store, the bus between nodes) a
//! level is its bare number, 0 to 3, so the enum only exists inside the program.

use serde::{Deserialize, Serialize};

/// A kill-switch level. The variants are ordered: a higher level turns off more.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(try_from = "u8", into = "u8")]
pub enum KillLevel {
    /// Level 0: everything runs.
    #[default]
    Normal = 0,
    /// Level 1: AI off. The L1 model and the L2 templates never serve; studio bundles (L3)
    /// and the store shelf (L4) still do.
    AiOff = 1,
    /// Level 2: offers off. No offer at any level; sessions and events are still accepted.
    OffersOff = 2,
    /// Level 3: SDK off. No offers, and sessions and events are refused, so the SDK stops
    /// its telemetry.
    SdkOff = 3,
}

impl KillLevel {
    /// The level's number, as the wire and the store carry it.
    pub const fn as_u8(self) -> u8 {
        self as u8
    }

    /// Whether the AI levels (L1 model, L2 templates) may serve.
    pub fn allows_ai(self) -> bool {
        self < Self::AiOff
    }

    /// Whether any offer may be served.
    pub fn allows_offers(self) -> bool {
        self < Self::OffersOff
    }

    /// Whether the SDK may open sessions and send events.
    pub fn allows_sdk(self) -> bool {
        self < Self::SdkOff
    }
}

/// A number that is not a kill-switch level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("kill level {0} is out of range: it must be between 0 and 3")]
pub struct InvalidKillLevel(pub u8);

impl TryFrom<u8> for KillLevel {
    type Error = InvalidKillLevel;

    fn try_from(level: u8) -> Result<Self, Self::Error> {
        match level {
            0 => Ok(Self::Normal),
            1 => Ok(Self::AiOff),
            2 => Ok(Self::OffersOff),
            3 => Ok(Self::SdkOff),
            other => Err(InvalidKillLevel(other)),
        }
    }
}

impl From<KillLevel> for u8 {
    fn from(level: KillLevel) -> Self {
        level.as_u8()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [KillLevel; 4] = [
        KillLevel::Normal,
        KillLevel::AiOff,
        KillLevel::OffersOff,
        KillLevel::SdkOff,
    ];

    #[test]
    fn each_level_turns_off_what_the_one_below_does_and_more() {
        let allowed = |l: KillLevel| (l.allows_ai(), l.allows_offers(), l.allows_sdk());
        assert_eq!(allowed(KillLevel::Normal), (true, true, true));
        assert_eq!(allowed(KillLevel::AiOff), (false, true, true));
        assert_eq!(allowed(KillLevel::OffersOff), (false, false, true));
        assert_eq!(allowed(KillLevel::SdkOff), (false, false, false));
    }

    #[test]
    fn numbers_round_trip_and_four_is_refused() {
        for (n, level) in (0u8..).zip(ALL) {
            assert_eq!(level.as_u8(), n);
            assert_eq!(KillLevel::try_from(n), Ok(level));
        }
        let err = KillLevel::try_from(4).expect_err("4 is not a level");
        assert_eq!(
            err.to_string(),
            "kill level 4 is out of range: it must be between 0 and 3"
        );
    }

    #[test]
    fn the_wire_carries_the_bare_number() {
        for level in ALL {
            let json = serde_json::to_string(&level).expect("json");
            assert_eq!(json, level.as_u8().to_string());
            assert_eq!(
                serde_json::from_str::<KillLevel>(&json).expect("back"),
                level
            );
        }
        assert!(serde_json::from_str::<KillLevel>("4").is_err());
        assert!(serde_json::from_str::<KillLevel>("\"sdk_off\"").is_err());
    }
}
