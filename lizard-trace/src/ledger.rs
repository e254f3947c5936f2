//! [`ClientLedger`]: what each client process had stored, overwritten and refused, kept with the ring (and saved
//! with it) so a dump says whose records were lost, not only how many.

use std::collections::BTreeMap;

use crate::device::CopyMode;
use crate::head::Origin;

/// One client process's account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ClientAccount {
    /// The client's process id as the kernel recorded it at `connect`; [`ClientLedger::OTHERS`] for the
    /// processes beyond [`ClientLedger::MAX_ACCOUNTS`] (and for peers whose credentials could not be read).
    pub pid: u32,
    /// Records of this client stored in the ring.
    pub stored: u64,
    /// Of those, records later overwritten to make room for newer ones (its own or another client's).
    pub overwritten: u64,
    /// Messages of this client refused: over its share of the ring, malformed, oversized or with bad
    /// descriptors (the server's [`crate::Rejections`] says which kind, summed over clients).
    pub refused: u64,
    /// Connections of this process closed at once: its user not admitted, or too many connections (the
    /// server's [`crate::ServerStats`] says which).
    pub connections_refused: u64,
    /// Of the records stored, those copied from GPU device memory while the client waited for the copy
    /// ([`CopyMode::Sync`]).
    pub device_sync: u64,
    /// Of the records stored, those copied from GPU device memory without the client waiting
    /// ([`CopyMode::Async`]).
    pub device_async: u64,
}

/// Accounts by client process, ordered by pid, bounded by [`ClientLedger::MAX_ACCOUNTS`].
///
/// A server that runs for weeks meets many processes; the ledger keeps the first
/// [`MAX_ACCOUNTS`](Self::MAX_ACCOUNTS) and adds every later process to the account
/// [`OTHERS`](Self::OTHERS), so its memory stays bounded and the totals stay exact.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClientLedger {
    /// The accounts by pid.
    accounts: BTreeMap<u32, ClientAccount>,
}

impl ClientLedger {
    /// The most accounts the ledger keeps (about 100 KiB).
    pub const MAX_ACCOUNTS: usize = 4096;

    /// The account of processes beyond the limit and of peers without credentials: pid 0, which no client
    /// process has.
    pub const OTHERS: u32 = 0;

    /// An empty ledger.
    pub fn new() -> ClientLedger {
        ClientLedger::default()
    }

    /// The accounts, by ascending pid.
    pub fn accounts(&self) -> impl Iterator<Item = &ClientAccount> + '_ {
        self.accounts.values()
    }

    /// Number of accounts.
    pub fn len(&self) -> usize {
        self.accounts.len()
    }

    /// Whether no client has an account.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty()
    }

    /// The account of `pid`, if it has one of its own.
    pub fn get(&self, pid: u32) -> Option<&ClientAccount> {
        self.accounts.get(&pid)
    }

    /// Counts a stored record of `pid` whose payload came from `origin`.
    pub(crate) fn note_stored(&mut self, pid: u32, origin: &Origin) {
        let account = self.account(pid);
        account.stored += 1;
        match origin {
            Origin::Device {
                mode: CopyMode::Sync,
                ..
            } => account.device_sync += 1,
            Origin::Device {
                mode: CopyMode::Async,
                ..
            } => account.device_async += 1,
            Origin::Unknown | Origin::Inline | Origin::Memfd => {}
        }
    }

    /// Counts an overwritten record of `pid`.
    pub(crate) fn note_overwritten(&mut self, pid: u32) {
        self.account(pid).overwritten += 1;
    }

    /// Counts a refused message of `pid`.
    pub fn note_refused(&mut self, pid: u32) {
        self.account(pid).refused += 1;
    }

    /// Counts a refused connection of `pid`.
    pub fn note_connection_refused(&mut self, pid: u32) {
        self.account(pid).connections_refused += 1;
    }

    /// Adds a saved account; false when its pid is not above the last one or the ledger is full (what a
    /// loader reports as a corrupt file).
    pub(crate) fn restore(&mut self, account: ClientAccount) -> bool {
        let ascending = self
            .accounts
            .keys()
            .next_back()
            .is_none_or(|&last| account.pid > last);
        if !ascending || self.accounts.len() >= Self::MAX_ACCOUNTS {
            return false;
        }
        self.accounts.insert(account.pid, account);
        true
    }

    /// The account `pid`'s counts go to: its own, a new one while there is room, else [`Self::OTHERS`].
    fn account(&mut self, pid: u32) -> &mut ClientAccount {
        let key =
            if self.accounts.contains_key(&pid) || self.accounts.len() < Self::MAX_ACCOUNTS - 1 {
                pid
            } else {
                Self::OTHERS
            };
        self.accounts.entry(key).or_insert(ClientAccount {
            pid: key,
            ..ClientAccount::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_go_to_their_process() {
        let mut ledger = ClientLedger::new();
        ledger.note_stored(7, &Origin::Inline);
        ledger.note_stored(7, &Origin::Inline);
        ledger.note_overwritten(7);
        ledger.note_refused(9);
        let seven = ledger.get(7).unwrap();
        assert_eq!((seven.stored, seven.overwritten, seven.refused), (2, 1, 0));
        assert_eq!(ledger.get(9).unwrap().refused, 1);
        let pids: Vec<u32> = ledger.accounts().map(|a| a.pid).collect();
        assert_eq!(pids, [7, 9]);
    }

    #[test]
    fn processes_beyond_the_limit_share_one_account_and_nothing_is_lost() {
        let mut ledger = ClientLedger::new();
        let n = ClientLedger::MAX_ACCOUNTS as u32 + 100;
        for pid in 1..=n {
            ledger.note_stored(pid, &Origin::Memfd);
        }
        assert_eq!(ledger.len(), ClientLedger::MAX_ACCOUNTS);
        let total: u64 = ledger.accounts().map(|a| a.stored).sum();
        assert_eq!(total, u64::from(n));
        let others = ledger.get(ClientLedger::OTHERS).unwrap();
        assert_eq!(
            others.stored,
            u64::from(n) - (ClientLedger::MAX_ACCOUNTS as u64 - 1)
        );
        // A process that already has an account keeps it.
        ledger.note_refused(1);
        assert_eq!(ledger.get(1).unwrap().refused, 1);
    }

    #[test]
    fn restore_wants_ascending_pids_and_room() {
        let mut ledger = ClientLedger::new();
        let account = |pid| ClientAccount {
            pid,
            ..ClientAccount::default()
        };
        assert!(ledger.restore(account(3)));
        assert!(!ledger.restore(account(3)));
        assert!(!ledger.restore(account(2)));
        assert!(ledger.restore(account(4)));
    }
}
