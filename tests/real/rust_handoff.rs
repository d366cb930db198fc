// Data handed from one thread to another through an Arc'd AtomicBool's
// Release store and Acquire load, which are plain moves on x86: only the
// DWARF that says they are core::sync::atomic's orders them.  Correct.
// With the argument "racy", the data is written after the flag: a race.
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

struct Shared {
    data: UnsafeCell<[u64; 8]>,
    ready: AtomicBool,
}

unsafe impl Sync for Shared {}

fn main() {
    let racy = std::env::args().nth(1).as_deref() == Some("racy");
    let s = Arc::new(Shared {
        data: UnsafeCell::new([0; 8]),
        ready: AtomicBool::new(false),
    });
    let p = {
        let s = s.clone();
        thread::spawn(move || {
            if racy {
                s.ready.store(true, Ordering::Release);
            }
            unsafe {
                for i in 0..8 {
                    (*s.data.get())[i] = i as u64;
                }
            }
            if !racy {
                s.ready.store(true, Ordering::Release);
            }
        })
    };
    let c = {
        let s = s.clone();
        thread::spawn(move || {
            while !s.ready.load(Ordering::Acquire) {
                thread::yield_now();
            }
            let sum: u64 = unsafe { (*s.data.get()).iter().sum() };
            println!("sum {}", sum);
        })
    };
    p.join().unwrap();
    c.join().unwrap();
}
