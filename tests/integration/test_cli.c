#include <criterion/criterion.h>
Test(issue2, placeholder) {}
