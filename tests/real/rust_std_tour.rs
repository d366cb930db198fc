// Rust's std synchronisation in a release build's shape, correct in every
// schedule: Once, OnceLock, thread_local!, a Mutex'd HashMap, an RwLock,
// atomics, a Barrier, a Condvar, a bounded (sync_channel) and scoped
// threads.  `ptloom races` on it built -O without -g: std's channel
// slots' atomics are only loaded and stored (plain movs), which looked
// like 7 races before.  Built by tests/real/test_real.c with rustc.
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Condvar, Mutex, Once, OnceLock, RwLock};
use std::thread;

static INIT: Once = Once::new();
static CONFIG: OnceLock<String> = OnceLock::new();
thread_local!(static LOCAL: std::cell::Cell<u32> = std::cell::Cell::new(0));

fn main() {
    let map = Arc::new(Mutex::new(HashMap::new()));
    let rw = Arc::new(RwLock::new(0u64));
    let flag = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let barrier = Arc::new(Barrier::new(4));
    let (tx, rx) = mpsc::sync_channel::<u64>(2);
    let mut hs = Vec::new();
    for i in 0..4u64 {
        let (map, rw, flag, count, pair, barrier, tx) = (map.clone(), rw.clone(), flag.clone(), count.clone(), pair.clone(), barrier.clone(), tx.clone());
        hs.push(thread::spawn(move || {
            INIT.call_once(|| { CONFIG.get_or_init(|| "cfg".to_string()); });
            LOCAL.with(|l| l.set(l.get() + i as u32));
            map.lock().unwrap().insert(i, i * 2);
            *rw.write().unwrap() += i;
            let _r = *rw.read().unwrap();
            count.fetch_add(1, Ordering::Relaxed);
            barrier.wait();
            if i == 0 { flag.store(true, Ordering::Release); }
            let (m, cv) = &*pair;
            let mut g = m.lock().unwrap();
            *g += 1;
            cv.notify_all();
            while *g < 4 { g = cv.wait(g).unwrap(); }
            drop(g);
            tx.send(i).unwrap();
            let s: Vec<u64> = (0..100).map(|x| x * i).collect();
            s.iter().sum::<u64>()
        }));
    }
    drop(tx);
    let got: u64 = rx.iter().sum();
    let sums: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    let scoped = thread::scope(|s| {
        let a = s.spawn(|| map.lock().unwrap().len());
        let b = s.spawn(|| *rw.read().unwrap());
        a.join().unwrap() as u64 + b.join().unwrap()
    });
    assert!(flag.load(Ordering::Acquire));
    println!("{} {} {} {} {}", got, sums, scoped, count.load(Ordering::Relaxed), CONFIG.get().unwrap());
}
