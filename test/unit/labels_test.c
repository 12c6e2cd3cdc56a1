/*
 * labels_test: lib/labels.c reads a labels file (comments, blank lines,
 * commas), refuses a bad index, too many or too few lines, and checks a
 * class against a classifier output's range while counting top-1.
 */
#include <unistd.h>

#include "labels.h"
#include "unit.h"

static const char *
write_file(const char *text)
{
	static char path[] = "/tmp/labels_testXXXXXX";
	int fd;

	strcpy(path, "/tmp/labels_testXXXXXX");
	if ((fd = mkstemp(path)) < 0)
		return NULL;
	if (write(fd, text, strlen(text)) < 0)
		path[0] = '\0';
	close(fd);
	return path;
}

static void
test_load(void)
{
	struct labels l;
	struct err e = { "" };
	const char *p = write_file("# classes\n1\n\n 2, 0 1\n");

	REQUIRE(p != NULL);
	REQUIRE(labels_load(&l, p, 2, &e) == 0);
	CHECK_EQ_INT(l.n, 2);
	CHECK_EQ_INT(l.count[0], 1);
	CHECK_EQ_INT(l.v[0][0], 1);
	CHECK_EQ_INT(l.count[1], 3);
	CHECK_EQ_INT(l.v[1][2], 1);
	CHECK_EQ_INT(l.line[1], 4);
	labels_free(&l);
	CHECK_EQ_INT(labels_load(&l, p, 1, &e), -1);
	CHECK(strstr(e.msg, ":4: more lines than the 1 samples") != NULL);
	CHECK_EQ_INT(labels_load(&l, p, 3, &e), -1);
	CHECK(strstr(e.msg, ": 2 lines of labels for 3 samples") != NULL);
	unlink(p);
	p = write_file("0\n1\ncat\n");
	REQUIRE(p != NULL);
	CHECK_EQ_INT(labels_load(&l, p, 3, &e), -1);
	CHECK(strstr(e.msg, ":3: not a class index: cat") != NULL);
	CHECK(l.v == NULL);
	unlink(p);
}

static void
test_top1(void)
{
	int64_t d[] = { 1, 3 };
	struct labels l;
	struct compare c;
	struct tensor t;
	struct err e = { "" };
	const char *p = write_file("2\n5\n");

	REQUIRE(p != NULL);
	REQUIRE(labels_load(&l, p, 2, &e) == 0);
	REQUIRE(tensor_alloc(&t, DT_FLOAT, 2, d, &e) == 0);
	memset(t.data, 0, 3 * sizeof(float));
	((float *)t.data)[2] = 1;
	compare_init(&c);
	CHECK_EQ_INT(labels_add_top1(&l, 0, "y", &c, &t, &t, &e), 0);
	CHECK_EQ_INT(c.rows, 1);
	CHECK_EQ_INT(c.correct_x, 1);
	CHECK_EQ_INT(labels_add_top1(&l, 1, "y", &c, &t, &t, &e), -1);
	CHECK(strstr(e.msg, ":2: class 5 out of range for output y "
	    "(3 classes)") != NULL);
	/* Without labels, only the agreement is counted. */
	CHECK_EQ_INT(labels_add_top1(NULL, 1, "y", &c, &t, &t, &e), 0);
	CHECK_EQ_INT(c.rows, 2);
	CHECK_EQ_INT(c.labeled, 1);
	tensor_release(&t);
	labels_free(&l);
	unlink(p);
}

UNIT_MAIN(test_load, test_top1)
