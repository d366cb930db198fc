/*
 * The one place that includes the C code protoc-c generates from
 * proto/schedule.proto (built into the build directory by
 * proto/meson.build).  Everything else that needs the wire types includes
 * this file, so a change of generator or of its include path is made here.
 *
 * Only replayer/schedule.c and the tests that craft malformed files use
 * these types; the rest of ptloom sees struct schedule (replayer/schedule.h).
 */
#ifndef PTLOOM_SCHEDULE_PB_H
#define PTLOOM_SCHEDULE_PB_H

#include "schedule.pb-c.h"

/* The file magic written before the serialized Schedule message. */
#define SCHEDULE_MAGIC "PTLOOM\0\1"
#define SCHEDULE_MAGIC_LEN 8

#endif
