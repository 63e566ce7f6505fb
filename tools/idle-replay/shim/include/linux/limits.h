/* SPDX-License-Identifier: GPL-2.0 */
/* Part of the replay shim: everything is in kapi.h. */
#include "../../kapi.h"
