//! The limits on signing in, kept in this node's memory. Every attempt, right or wrong, counts
//! against the client's IP address, against the pair of that address and the email it names,
//! and against the email from every address together, in that order (a refused check counts
//! against none after it). The pair's limit is the tight one, so guesses from one address are
//! stopped there and never lock the email's owner out of another address; the email's own
//! limit is much slower (per hour) and only stops guessing spread over many addresses. A
//! refusal is a 429 with `Retry-After`, shown on the form. The limits are
//! `dashboard.sign_ins_per_*` in the configuration.

use std::net::IpAddr;

use super::keyed::Keyed;
use crate::config::DashboardSettings;
use crate::service::ServiceError;

/// This node's sign-in limits.
pub struct SignInThrottle {
    by_ip: Keyed<IpAddr>,
    by_ip_and_email: Keyed<(IpAddr, String)>,
    by_email: Keyed<String>,
}

impl SignInThrottle {
    /// Limits as configured.
    pub fn new(settings: &DashboardSettings) -> Self {
        Self {
            by_ip: Keyed::new(settings.sign_ins_per_ip_per_minute),
            by_ip_and_email: Keyed::new(settings.sign_ins_per_ip_and_email_per_minute),
            by_email: Keyed::per_hour(settings.sign_ins_per_email_per_hour),
        }
    }

    /// An attempt from `ip` naming `email`: the address's limit, the pair's, then the email's.
    pub fn attempt(&self, ip: IpAddr, email: &str) -> Result<(), ServiceError> {
        let email = email.trim().to_lowercase();
        self.by_ip.check(&ip)?;
        self.by_ip_and_email.check(&(ip, email.clone()))?;
        self.by_email.check(&email)
    }
}
