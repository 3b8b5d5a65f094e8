#include "headless.h"

#include <cstdlib>

int main(int argc, char **argv)
{
    // The window arrives with the workbench window issue; until then every run is headless.
    return elsai::runHeadless(argc, argv);
}
