/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Part of the replay shim: TRACE_EVENT() is in kapi.h, and an event header
 * is read only once, so there is nothing left to define here.
 */
#include "../../kapi.h"
