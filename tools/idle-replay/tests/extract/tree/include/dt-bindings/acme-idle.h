/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _DT_BINDINGS_ACME_IDLE_H
#define _DT_BINDINGS_ACME_IDLE_H

#define ACME_CLUSTER_WAKEUP_US	700

#endif
