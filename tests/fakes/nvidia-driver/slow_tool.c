// SPDX-License-Identifier: Apache-2.0
/* Stands in for a hung tool (ldconfig on a dead file server): it ignores its
 * arguments and never exits on its own. */
#include <unistd.h>

int main(void) {
    for (;;) {
        pause();
    }
}
