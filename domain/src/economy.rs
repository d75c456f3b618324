//! FSR quadrants: the classification of a game's faucet/sink ratio against its
//! genre's healthy range, which gates the AI levels of the pipeline.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How far beyond the genre maximum the FSR must be to count as hyper-inflation.
pub const HYPER_INFLATION_FACTOR: f64 = 2.5;

/// An FSR quadrant, serialised in capitals (`HYPER_INFL` for hyper-inflation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Quadrant {
    /// FSR below the genre minimum: players burn currency faster than they earn it.
    Deflation,
    /// Within the genre range: AI offers permitted.
    #[default]
    Healthy,
    /// Above the genre maximum: too much free currency.
    Inflation,
    /// Above the genre maximum x 2.5: AI offers (L1 and L2) are suppressed.
    #[serde(rename = "HYPER_INFL")]
    HyperInfl,
}

impl Quadrant {
    /// Classifies an FSR against a genre's healthy range. A NaN FSR (no data) is `Healthy`:
    /// with nothing measured there is no evidence to suppress AI offers on.
    pub fn classify(fsr: f64, min: f64, max: f64) -> Self {
        if fsr > max * HYPER_INFLATION_FACTOR {
            Self::HyperInfl
        } else if fsr > max {
            Self::Inflation
        } else if fsr < min {
            Self::Deflation
        } else {
            Self::Healthy
        }
    }

    /// Whether the AI levels (L1 and L2) may serve in this quadrant.
    pub fn allows_ai(self) -> bool {
        self != Self::HyperInfl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_rpg() {
        assert_eq!(Quadrant::classify(0.5, 0.8, 2.0), Quadrant::Deflation);
        assert_eq!(Quadrant::classify(0.8, 0.8, 2.0), Quadrant::Healthy);
        assert_eq!(Quadrant::classify(2.0, 0.8, 2.0), Quadrant::Healthy);
        assert_eq!(Quadrant::classify(5.0, 0.8, 2.0), Quadrant::Inflation);
        assert_eq!(Quadrant::classify(5.01, 0.8, 2.0), Quadrant::HyperInfl);
        assert_eq!(Quadrant::classify(f64::NAN, 0.8, 2.0), Quadrant::Healthy);
        assert_eq!(
            serde_json::to_string(&Quadrant::HyperInfl).expect("json"),
            "\"HYPER_INFL\""
        );
        assert_eq!(
            serde_json::to_string(&Quadrant::Deflation).expect("json"),
            "\"DEFLATION\""
        );
    }
}
