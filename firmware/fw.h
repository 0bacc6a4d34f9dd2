/* fw.h - the firmware's sizes, shared with entry.S. */
#ifndef FW_H
#define FW_H

#define FW_MAX_HARTS  64    /* = SL_MAX_HARTS: a hart id at or past it parks for good */
#define FW_STACK      8192  /* per hart: the boot hart parses the device tree on it */
#define FW_REGS_SIZE  256   /* struct fw_regs: x0..x31 */

#endif
