#include "gui.h"
#include "headless.h"

int main(int argc, char **argv)
{
    // Decided before any application object exists, so headless runs never touch a display.
    if (elsai::wantsHeadless(argc, argv) || elsai::noDisplay())
        return elsai::runHeadless(argc, argv);
    return elsai::runGui(argc, argv);
}
