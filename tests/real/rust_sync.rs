// Rust's std synchronisation, correct in every schedule: a Mutex counter,
// a Condvar hand-off, an RwLock, a Barrier, an mpsc channel, scoped
// threads and atomics.  Built by tests/real/test_real.c with rustc when it
// is installed; prints one line that is the same in every run.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Condvar, Mutex, RwLock};
use std::thread;

fn main() {
    let counter = Arc::new(Mutex::new(0u64));
    let table = Arc::new(RwLock::new(vec![0u32; 4]));
    let barrier = Arc::new(Barrier::new(3));
    let ready = Arc::new((Mutex::new(false), Condvar::new()));
    let hits = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    let mut hs = vec![];
    for i in 0..3usize {
        let (c, t, b, r, h, tx) = (
            Arc::clone(&counter),
            Arc::clone(&table),
            Arc::clone(&barrier),
            Arc::clone(&ready),
            Arc::clone(&hits),
            tx.clone(),
        );
        hs.push(thread::spawn(move || {
            for _ in 0..4 {
                *c.lock().unwrap() += 1;
            }
            t.write().unwrap()[i] += 1;
            b.wait();
            let seen: u32 = t.read().unwrap().iter().sum();
            let (m, cv) = &*r;
            let mut go = m.lock().unwrap();
            while !*go {
                go = cv.wait(go).unwrap();
            }
            h.fetch_add(1, Ordering::SeqCst);
            tx.send(seen).unwrap();
        }));
    }
    drop(tx);
    {
        let (m, cv) = &*ready;
        *m.lock().unwrap() = true;
        cv.notify_all();
    }
    let got: Vec<u32> = rx.iter().collect();
    for h in hs {
        h.join().unwrap();
    }
    let mut scoped = [0u64; 2];
    thread::scope(|s| {
        for (k, slot) in scoped.iter_mut().enumerate() {
            s.spawn(move || *slot = (k as u64 + 1) * 10);
        }
    });
    assert!(got.iter().all(|&s| s == 3));
    println!(
        "counter {} table {} hits {} messages {} scoped {}",
        *counter.lock().unwrap(),
        table.read().unwrap().iter().sum::<u32>(),
        hits.load(Ordering::SeqCst),
        got.len(),
        scoped[0] + scoped[1]
    );
}
