//! The bus of the embedded store: a `tokio::sync::broadcast` channel in this process, which
//! reaches the one node that owns the file (see the parent module's "One node per file").

use async_trait::async_trait;
use tokio::sync::broadcast;

use super::SqliteStore;
use crate::store::{Bus, StoreResult};
use offer_wire::bus::BusMessage;

#[async_trait]
impl Bus for SqliteStore {
    async fn publish(&self, msg: &BusMessage) -> StoreResult<()> {
        // No subscriber is not an error: the message simply has nobody to reach.
        let _ = self.bus.send(msg.clone());
        Ok(())
    }

    fn subscribe(&self) -> broadcast::Receiver<BusMessage> {
        self.bus.subscribe()
    }
}
