/*
 * The shared page's words of the in-program hand-off between threads
 * (tracer/agent.c, agent.S): offsets in the page, read by the assembly
 * and the C side alike.  The page's header and the slots' words are in
 * tramp.h; these use what it left free.
 */
#ifndef PTLOOM_AGENT_LAYOUT_H
#define PTLOOM_AGENT_LAYOUT_H

#define HO_CUR 200	/* the participant whose turn it is */
#define HO_SW 208	/* the log offset of the next planned switch, or ~0 */
#define HO_LIM 216	/* the limit the plan set (a futex slot may lower it) */
#define HO_ID 224	/* scratch: the slot being entered */
#define HO_JMP 232	/* scratch: where the turn's holder goes on */
#define HO_KEY 240	/* the launcher's key: the agent's own syscalls */
/* the log ends here; the plan's decisions and each participant's saved
 * registers and go word after it */
#define HO_LOG_END 40960
#define HO_DEC 40960
#define HO_NDEC 1024
#define HO_SAVE 49152
#define HO_SV 192
#define HO_MAX 64
/* a participant's save area */
#define SV_RAX 0
#define SV_RCX 8
#define SV_RDX 16
#define SV_RSI 24
#define SV_RDI 32
#define SV_R8 40
#define SV_R9 48
#define SV_R10 56
#define SV_R11 64
#define SV_R12 72
#define SV_FL 80	/* lahf's flags above seto's OF, as the slots keep them */
#define SV_TGT 88	/* where it goes on: its slot's displaced instructions */
#define SV_PHASE 96	/* SVP_* */
#define SV_ENTRY 104	/* the log offset of its entry */
#define SV_ID 112	/* its slot */
#define SV_NEXT 120	/* at a switch: the participant it handed over to */
/* its go word (a futex word): 0 parked, 1 its turn (the participant
 * handing over sets it), 2 stop at the park's int3 (the supervisor) */
#define SV_GO 128
/* phases: registers saved, not logged (it starts again at its site);
 * logged and going on; logged, handing over (go[next] not yet set);
 * handed over or parked */
#define SVP_SAVED 1
#define SVP_ON 2
#define SVP_SWITCH 3
#define SVP_PARKED 4
/* a logged point's first word: the slot's index, the participant above
 * bit 32 */
#define HO_ENTRY_FLAG 62

#endif
