//! The bus: messages between engine nodes, each applied by every node, the sender
//! included.

use async_trait::async_trait;
use tokio::sync::broadcast;

use super::StoreResult;
use offer_wire::bus::BusMessage;

/// Publishing to and hearing from every node.
#[async_trait]
pub trait Bus: Send + Sync {
    /// Sends a message to every node, this one included.
    async fn publish(&self, msg: &BusMessage) -> StoreResult<()>;

    /// Receives every bus message from now on.
    fn subscribe(&self) -> broadcast::Receiver<BusMessage>;
}
