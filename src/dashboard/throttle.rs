//! The limits on signing in, kept in this node's memory: every attempt, right or wrong, counts
//! against the client's IP address and against the email it names (so spreading guesses over
//! many addresses does not help). A refusal is a 429 with `Retry-After`, shown on the form.
//! The limits are `dashboard.sign_ins_per_*` in the configuration.

use std::net::IpAddr;

use crate::config::DashboardSettings;
use crate::http::throttle::Keyed;
use crate::service::ServiceError;

/// This node's sign-in limits.
pub struct SignInThrottle {
    by_ip: Keyed<IpAddr>,
    by_email: Keyed<String>,
}

impl SignInThrottle {
    /// Limits as configured.
    pub fn new(settings: &DashboardSettings) -> Self {
        Self {
            by_ip: Keyed::new(settings.sign_ins_per_ip_per_minute),
            by_email: Keyed::new(settings.sign_ins_per_email_per_minute),
        }
    }

    /// An attempt from `ip` naming `email`: the address's limit first, then the email's.
    pub fn attempt(&self, ip: IpAddr, email: &str) -> Result<(), ServiceError> {
        self.by_ip.check(&ip)?;
        self.by_email.check(&email.trim().to_lowercase())
    }
}
