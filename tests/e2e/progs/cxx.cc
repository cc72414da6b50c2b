// SPDX-License-Identifier: GPL-2.0
/*
 * e2e target: C++ names.  A class in a namespace with an overloaded
 * method, a method that reads its members, and a function template;
 * main() calls each once per round, two rounds, and every call prints
 * what it was given:
 *
 *   draw(int N) on W        (ns::Widget::draw(int), N = round + 1)
 *   draw(double X) on W     (ns::Widget::draw(double), X = round + 0.5)
 *   area W*H                (ns::Widget::area() const, returns W * H)
 *   twice<int>(V)           (ns::twice<int>(int), returns 2 * V)
 *
 * The widget is 3 by 4 in round 0 and 5 by 6 in round 1.
 */
#include <cstdio>

namespace ns {

class Widget {
public:
	Widget(int w, int h) : w_(w), h_(h) {}
	__attribute__((noipa)) void draw(int n);
	__attribute__((noipa)) void draw(double x);
	__attribute__((noipa)) int area() const;
	int w_, h_;
};

void Widget::draw(int n)
{
	std::printf("draw(int %d) on %dx%d\n", n, w_, h_);
}

void Widget::draw(double x)
{
	std::printf("draw(double %.1f) on %dx%d\n", x, w_, h_);
}

int Widget::area() const
{
	std::printf("area %d*%d\n", w_, h_);
	return w_ * h_;
}

template <typename T> __attribute__((noipa)) T twice(T v)
{
	std::printf("twice<int>(%d)\n", (int)v);
	return 2 * v;
}

} // namespace ns

int main()
{
	volatile int rounds = 2;	/* one call site each: no unrolling */

	for (int r = 0; r < rounds; r++) {
		ns::Widget w(3 + 2 * r, 4 + 2 * r);

		w.draw(r + 1);
		w.draw(r + 0.5);
		ns::twice<int>(w.area());
	}
	return 0;
}
